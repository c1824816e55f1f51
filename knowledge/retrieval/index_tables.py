"""A router index's per-entry tables as arrays (``tables``), to store in a shared segment and map back.

``export_tables(index)`` turns the Python tables ``RouterIndex`` builds from
its entries (positions, ID/alias keys, semantic IDs, curated keywords, wiki
links, the typo table) into ``StrTable``/``Ragged`` arrays; ``import_tables``
gives the router read-only views over the mapped arrays with the API of the
dicts, lists and sets they replace (same keys, values and order), so every
route is the same. Each view decodes only what a question touches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .tables import _CACHE_MAX, _MISSING, Ragged, RowMap, SlotRows, StrTable

_SEP = "\x1f"  # joins a keyword's analyzed terms (never inside a term: terms hold no whitespace or controls)

_KW_CARRIED, _KW_TOO_COMMON = 1, 2


def _joined(terms: tuple[str, ...]) -> str:
    return _SEP.join(terms)


def _split(key: str) -> tuple[str, ...]:
    return tuple(key.split(_SEP))


class KeywordIds(Mapping):
    """``keyword terms (tuple) → keyword id``."""

    def __init__(self, keys: StrTable):
        self.keys = keys

    def get(self, terms, default=None):
        i = self.keys.get(_joined(terms))
        return default if i is None else i

    def __getitem__(self, terms) -> int:
        i = self.get(terms)
        if i is None:
            raise KeyError(terms)
        return i

    def __contains__(self, terms) -> bool:
        return self.get(terms) is not None

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return map(_split, self.keys)

    def __len__(self) -> int:
        return len(self.keys)


class KeywordEntries(Mapping):
    """``keyword terms → its carriers`` (int64 array) for keywords not too common; ``too_common``: the others."""

    def __init__(self, keys: StrTable, state: np.ndarray, carriers: Ragged, wanted: int = _KW_CARRIED):
        self.keys, self.state, self.carriers, self.wanted = keys, state, carriers, wanted

    def _id(self, terms) -> int | None:
        i = self.keys.get(_joined(terms))
        return i if i is not None and self.state[i] == self.wanted else None

    def get(self, terms, default=None):
        i = self._id(terms)
        return default if i is None else self.carriers.array(i)

    def __getitem__(self, terms) -> np.ndarray:
        i = self._id(terms)
        if i is None:
            raise KeyError(terms)
        return self.carriers.array(i)

    def __contains__(self, terms) -> bool:
        return self._id(terms) is not None

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        for i in np.flatnonzero(np.asarray(self.state) == self.wanted).tolist():
            yield _split(self.keys.key(i))

    def __len__(self) -> int:
        return int(np.count_nonzero(np.asarray(self.state) == self.wanted))


class KeywordsByRarest(Mapping):
    """``term → the keywords (terms tuples) reached from it``, in filing order."""

    def __init__(self, heads: RowMap, keyword_keys: StrTable):
        self.heads, self.keyword_keys = heads, keyword_keys
        # Decoded lists of the heads questions ask for (every question asks its terms' heads again).
        self._cache: dict[str, list[tuple[str, ...]] | None] = {}

    def get(self, term, default=None):
        found = self._cache.get(term, _MISSING)
        if found is _MISSING:
            row = self.heads.get(term)
            found = None if row is None else [_split(self.keyword_keys.key(i)) for i in row]
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[term] = found
        return default if found is None else found

    def __getitem__(self, term) -> list[tuple[str, ...]]:
        found = self.get(term)
        if found is None:
            raise KeyError(term)
        return found

    def __contains__(self, term) -> bool:
        return term in self.heads

    def __iter__(self) -> Iterator[str]:
        return iter(self.heads)

    def __len__(self) -> int:
        return len(self.heads)


class EntryKeywords(Sequence):
    """Per entry: ``(keyword id, keyword as written)`` of its curated keywords that analyze to terms."""

    def __init__(self, ids: Ragged, positions: Ragged, entries: Sequence):
        self.ids, self.positions, self.entries = ids, positions, entries
        # Decoded rows of the entries questions reach (the keyword signal asks the same candidates again).
        self._cache: dict[int, tuple[tuple[int, str], ...]] = {}

    def __getitem__(self, i: int) -> tuple[tuple[int, str], ...]:
        found = self._cache.get(i)
        if found is None:
            keywords = self.entries[i].keywords
            found = tuple(zip(self.ids[i], (keywords[j] for j in self.positions[i])))
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[i] = found
        return found

    def __len__(self) -> int:
        return len(self.ids)


class LinkKeys(Sequence):
    """Per entry: the package keys its body links to, in order (``index.entry_link_keys``)."""

    def __init__(self, keys: StrTable, rows: Ragged):
        self.keys, self.rows = keys, rows

    def __getitem__(self, i: int) -> tuple[str, ...]:
        key = self.keys.key
        return tuple(key(k) for k in self.rows[i])

    def __len__(self) -> int:
        return len(self.rows)


class DeleteTable(Mapping):
    """The typo table (``typos.TypoExpander``): a deletion variant → the vocabulary terms it comes from."""

    def __init__(self, rows: RowMap, vocabulary: StrTable):
        self.rows, self.vocabulary = rows, vocabulary

    def get(self, key, default=None):
        row = self.rows.get(key)
        return default if row is None else [self.vocabulary.key(col) for col in row]

    def __getitem__(self, key) -> list[str]:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def _str_rows(mapping: Mapping[str, Sequence[int]]) -> tuple[StrTable, Ragged]:
    return StrTable.build(list(mapping)), Ragged.build(mapping.values())


def _kept_positions(keywords: Sequence[str], analyzed: Sequence[tuple[int, str]]) -> list[int]:
    """Where each kept keyword (in the entry's order) is in ``keywords``."""
    positions, j = [], 0
    for _, kw in analyzed:
        while keywords[j] != kw:
            j += 1
        positions.append(j)
        j += 1
    return positions


def export_tables(index) -> dict[str, StrTable | Ragged]:
    """The arrays of ``index``'s per-entry tables (built from its entries, in memory)."""
    n = len(index.entries)
    out: dict[str, StrTable | Ragged] = {}
    out["position"] = StrTable.build(list(index.position), list(index.position.values()))
    out["id_keys"] = StrTable.build(list(index.id_keys), list(index.id_keys.values()))
    out["semantic.keys"], out["semantic.rows"] = _str_rows(index.semantic)
    keyword_terms = list(index.keyword_ids)
    if [index.keyword_ids[t] for t in keyword_terms] != list(range(len(keyword_terms))):
        raise ValueError("keyword ids are not in insertion order")
    out["keywords.keys"] = StrTable.build([_joined(t) for t in keyword_terms])
    state = np.zeros(len(keyword_terms), dtype=np.int8)
    carriers = []
    for i, terms in enumerate(keyword_terms):
        found = index.keyword_entries.get(terms)
        if found is not None:
            state[i] = _KW_CARRIED
            carriers.append(found.tolist())
        else:
            state[i] = _KW_TOO_COMMON if terms in index.keywords_too_common else 0
            carriers.append(())
    out["keywords.carriers"] = Ragged.build(carriers)
    out["keywords.state"] = state
    out["keywords.heads.keys"] = StrTable.build(list(index.keywords_by_rarest))
    out["keywords.heads.rows"] = Ragged.build(
        [index.keyword_ids[t] for t in groups] for groups in index.keywords_by_rarest.values()
    )
    out["entry_keywords.ids"] = Ragged.build([kw_id for kw_id, _ in analyzed] for analyzed in index.entry_keywords)
    positions = getattr(index, "entry_keyword_positions", None)  # recorded by an in-memory build
    if positions is None:
        positions = [_kept_positions(e.keywords, analyzed) for e, analyzed in zip(index.entries, index.entry_keywords)]
    out["entry_keywords.positions"] = Ragged.build(positions)
    out["links"] = Ragged.build(index.links.get(i, ()) for i in range(n))
    link_ids: dict[str, int] = {}
    out["link_keys.rows"] = Ragged.build(
        [link_ids.setdefault(k, len(link_ids)) for k in index.link_keys[i]] for i in range(n)
    )
    out["link_keys.keys"] = StrTable.build(list(link_ids))
    counts = index.body_token_counts
    if counts is None:  # a build that did not read the bodies (no body weight): counted here
        counts = np.array([index.body_tokens(i) for i in range(n)], dtype=np.int32)
    out["body_tokens"] = np.asarray(counts, dtype=np.int32)
    index.typos.prepare()
    deletes = index.typos._deletes
    vocabulary = index.bm25.vocabulary
    out["typos.keys"] = StrTable.build(list(deletes))
    out["typos.rows"] = Ragged.build([vocabulary[t] for t in terms] for terms in deletes.values())
    return out


# The tables ``export_tables`` writes and ``import_tables`` reads, in the order ``export_tables`` returns
# them (a segment's meta lists its tables in that order; ``table_build.TableBuilder`` returns the same).
TABLE_ORDER = (
    "position",
    "id_keys",
    "semantic.keys",
    "semantic.rows",
    "keywords.keys",
    "keywords.carriers",
    "keywords.state",
    "keywords.heads.keys",
    "keywords.heads.rows",
    "entry_keywords.ids",
    "entry_keywords.positions",
    "links",
    "link_keys.rows",
    "link_keys.keys",
    "body_tokens",
    "typos.keys",
    "typos.rows",
)
TABLE_NAMES = frozenset(TABLE_ORDER)


def import_tables(tables: Mapping[str, object], entries: Sequence, vocabulary: StrTable) -> dict[str, object]:
    """``RouterIndex`` attributes (views) over mapped ``tables`` (``segments.segment_load``).

    A segment written by code that stored another set of tables (same format number) is refused
    with ``ValueError``, which the index store treats as an unreadable segment: rebuilt, not a crash.
    """
    missing = TABLE_NAMES.difference(tables)
    if missing:
        raise ValueError(f"segment tables missing: {', '.join(sorted(missing))}")
    keyword_keys = tables["keywords.keys"]
    state = tables["keywords.state"]
    carriers = tables["keywords.carriers"]
    return {
        "position": tables["position"],
        "id_keys": tables["id_keys"],
        "semantic": RowMap(tables["semantic.keys"], tables["semantic.rows"]),
        "keyword_ids": KeywordIds(keyword_keys),
        "keyword_entries": KeywordEntries(keyword_keys, state, carriers),
        "keywords_too_common": KeywordEntries(keyword_keys, state, carriers, wanted=_KW_TOO_COMMON),
        "keywords_by_rarest": KeywordsByRarest(
            RowMap(tables["keywords.heads.keys"], tables["keywords.heads.rows"]), keyword_keys
        ),
        "entry_keywords": EntryKeywords(tables["entry_keywords.ids"], tables["entry_keywords.positions"], entries),
        "links": SlotRows(tables["links"]),
        "link_keys": LinkKeys(tables["link_keys.keys"], tables["link_keys.rows"]),
        "typo_table": DeleteTable(RowMap(tables["typos.keys"], tables["typos.rows"]), vocabulary),
        "body_tokens": tables["body_tokens"],
    }
