"""The router's per-entry tables built from a catalog read batch by batch (issue 17: build at 100k).

``TableBuilder`` gives the arrays ``index_tables.export_tables`` gives for a
``RouterIndex`` built over the same entries (same names, order, dtypes and
bytes), without holding the entries or a ``RouterIndex``: the streaming
segment builder feeds it batches of entries and writes what ``finish``
returns. Across batches it keeps flat integer arrays with row pointers, and
dicts only where a key is deduplicated (package keys, semantic IDs, keyword
strings and their analyzed terms, link targets); the rows (semantic IDs,
keyword carriers, links both ways) are placed at the end by stable sorts, in
the order the in-memory build appends them.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

import numpy as np

from common.text import analyze

from .entries import EntryLike
from .index import package_key, entry_link_keys
from .index_tables import _KW_CARRIED, _KW_TOO_COMMON, _SEP, TABLE_ORDER
from .tables import Ragged, StrTable
from .typos import typo_filing

_NO_TERMS = -1  # a keyword as written that analyzes to nothing


def _ragged(owners: np.ndarray, values: np.ndarray, n_rows: int) -> Ragged:
    """``Ragged.build`` of the rows ``row r = [values[k] for k if owners[k] == r]`` (in ``k`` order)."""
    order = np.argsort(owners, kind="stable")
    ptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(owners, minlength=n_rows), out=ptr[1:])
    return Ragged(ptr, values[order].astype(np.int32))


def _rows(flat: array, lengths: np.ndarray) -> Ragged:
    """``Ragged.build`` of consecutive rows of ``flat`` with these lengths."""
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return Ragged(ptr, np.array(flat, dtype=np.int32))


def _owners(lengths: np.ndarray) -> np.ndarray:
    """The row of each value of consecutive rows with these lengths."""
    return np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)


class TableBuilder:
    """Per-entry tables of a catalog read batch by batch, kept as compact arrays."""

    def __init__(self, n_entries_hint: int | None = None):
        """``n_entries_hint``: how many entries will be added, if known (sizes the per-entry arrays once)."""
        self._n = 0
        self._finished = False
        # package ID → its last slot (``RouterIndex.position``: a dict comprehension, later duplicates win).
        self._position: dict[str, int] = {}
        # ID and alias key → the first slot naming it (``RouterIndex.id_keys``).
        self._id_keys: dict[str, int] = {}
        # Lowercased semantic ID → its row; (row, slot) per occurrence, in entry order.
        self._semantic: dict[str, int] = {}
        self._semantic_rows = array("i")
        self._semantic_slots = array("i")
        # Keyword as written → keyword id (or _NO_TERMS); analyzed terms (joined) → keyword id.
        self._analyzed: dict[str, int] = {}
        self._keyword_ids: dict[str, int] = {}
        # Per entry, its kept keywords' ids and their positions in ``e.keywords``; per entry, its link
        # targets as ids of ``_link_ids`` (first-seen order: ``export_tables``' ``link_keys.keys``).
        self._keyword_flat = array("i")
        self._keyword_positions = array("i")
        self._link_ids: dict[str, int] = {}
        self._link_flat = array("i")
        size = max(int(n_entries_hint or 0), 1)
        self._keyword_counts = np.zeros(size, dtype=np.int64)
        self._link_counts = np.zeros(size, dtype=np.int64)

    def __len__(self) -> int:
        return self._n

    def add(self, batch: Sequence[EntryLike], start: int) -> None:
        """Entries start..start+len(batch)-1, batches in order."""
        if self._finished:
            raise RuntimeError("the tables were already taken from this builder")
        if start != self._n:
            raise ValueError(f"batch starts at {start}, expected {self._n}")
        position, id_keys = self._position, self._id_keys
        semantic, analyzed, keyword_ids, link_ids = self._semantic, self._analyzed, self._keyword_ids, self._link_ids
        semantic_rows, semantic_slots = [], []
        keyword_flat, keyword_positions, keyword_counts = [], [], []
        link_flat, link_counts = [], []
        for i, e in enumerate(batch, start):
            package_id = e.package_id
            position[package_id] = i
            key = package_key(package_id)
            if key:
                id_keys.setdefault(key, i)
            for name in e.aliases:
                key = package_key(name)
                if key:
                    id_keys.setdefault(key, i)
            for sid in e.semantic_ids:
                low = sid.lower()
                row = semantic.get(low)
                if row is None:
                    row = semantic[low] = len(semantic)
                semantic_rows.append(row)
                semantic_slots.append(i)
            kept = len(keyword_flat)
            for j, kw in enumerate(e.keywords):
                kw_id = analyzed.get(kw)
                if kw_id is None:
                    terms = tuple(dict.fromkeys(analyze(kw)))
                    kw_id = analyzed[kw] = (
                        keyword_ids.setdefault(_SEP.join(terms), len(keyword_ids)) if terms else _NO_TERMS
                    )
                if kw_id != _NO_TERMS:
                    keyword_flat.append(kw_id)
                    keyword_positions.append(j)
            keyword_counts.append(len(keyword_flat) - kept)
            targets = entry_link_keys(e)
            for key in targets:
                link_id = link_ids.get(key)
                if link_id is None:
                    link_id = link_ids[key] = len(link_ids)
                link_flat.append(link_id)
            link_counts.append(len(targets))
        end = start + len(batch)
        if end > len(self._keyword_counts):
            grown = max(end, 2 * len(self._keyword_counts))
            self._keyword_counts = np.resize(self._keyword_counts, grown)
            self._link_counts = np.resize(self._link_counts, grown)
        self._keyword_counts[start:end] = keyword_counts
        self._link_counts[start:end] = link_counts
        self._semantic_rows.extend(semantic_rows)
        self._semantic_slots.extend(semantic_slots)
        self._keyword_flat.extend(keyword_flat)
        self._keyword_positions.extend(keyword_positions)
        self._link_flat.extend(link_flat)
        self._n = end

    def finish(self, vocabulary: Mapping[str, int], doc_freq: np.ndarray, body_tokens: np.ndarray) -> dict[str, object]:
        """The same dict export_tables(RouterIndex(entries, config=config)) returns, equal array for array
        (same dtypes, same bytes), for the entries added. `vocabulary`: term -> id (ids in insertion order),
        `doc_freq[id]`: the term's document frequency (what bm25.vocabulary_df() gives as a mapping; see
        tables.DocFreqView), `body_tokens`: the int32 per-entry body token counts (stored as is)."""
        n = self._n
        if self._finished:
            raise RuntimeError("the tables were already taken from this builder")
        if len(body_tokens) != n:
            raise ValueError(f"{len(body_tokens)} body token counts for {n} entries")
        self._finished = True
        # Each part of the builder's state is dropped once its tables are built: the typo table, the
        # largest transient, is built last, over what is left (the arrays returned).
        self._analyzed = None
        keyword_counts = self._keyword_counts[:n]
        link_counts = self._link_counts[:n]
        out: dict[str, object] = {}
        out["position"] = StrTable.build(list(self._position), list(self._position.values()))
        self._position = None
        out["semantic.keys"] = StrTable.build(list(self._semantic))
        out["semantic.rows"] = _ragged(
            np.frombuffer(self._semantic_rows, dtype=np.int32),
            np.frombuffer(self._semantic_slots, dtype=np.int32),
            len(self._semantic),
        )
        self._semantic = self._semantic_rows = self._semantic_slots = None
        keyword_keys = list(self._keyword_ids)
        self._keyword_ids = None
        out["keywords.keys"] = StrTable.build(keyword_keys)
        carried = self._keyword_carriers(keyword_counts, len(keyword_keys), out)
        out["keywords.heads.keys"], out["keywords.heads.rows"] = _keyword_heads(
            keyword_keys, carried, vocabulary, doc_freq
        )
        del keyword_keys, carried
        out["entry_keywords.ids"] = _rows(self._keyword_flat, keyword_counts)
        out["entry_keywords.positions"] = _rows(self._keyword_positions, keyword_counts)
        self._keyword_flat = self._keyword_positions = None
        out["links"] = self._links(link_counts)
        out["link_keys.rows"] = _rows(self._link_flat, link_counts)
        out["link_keys.keys"] = StrTable.build(list(self._link_ids))
        self._link_ids = self._link_flat = None
        out["id_keys"] = StrTable.build(list(self._id_keys), list(self._id_keys.values()))
        self._id_keys = None
        out["body_tokens"] = np.asarray(body_tokens, dtype=np.int32)
        out["typos.keys"], out["typos.rows"] = _typo_tables(vocabulary)
        return {name: out[name] for name in TABLE_ORDER}

    def _keyword_carriers(self, keyword_counts: np.ndarray, n_keywords: int, out: dict) -> np.ndarray:
        """``keywords.carriers`` and ``keywords.state`` into ``out``; which keywords are carried (bool)."""
        # Each keyword's distinct carriers, ascending: the (keyword, slot) pairs sorted stably by keyword
        # are in slot order within a keyword, and an entry repeating a keyword repeats it side by side.
        kw = np.frombuffer(self._keyword_flat, dtype=np.int32)
        order = np.argsort(kw, kind="stable")
        kw_sorted = kw[order]
        slots = _owners(keyword_counts)[order]
        del order
        first = np.ones(len(kw_sorted), dtype=bool)
        first[1:] = (kw_sorted[1:] != kw_sorted[:-1]) | (slots[1:] != slots[:-1])
        kw_sorted, slots = kw_sorted[first], slots[first]
        del first
        max_carriers = max(50, self._n // 20)
        carriers = np.bincount(kw_sorted, minlength=n_keywords)
        carried = carriers <= max_carriers
        out["keywords.carriers"] = Ragged(
            np.concatenate(([0], np.cumsum(np.where(carried, carriers, 0)))).astype(np.int64),
            slots[carried[kw_sorted]].astype(np.int32),
        )
        out["keywords.state"] = np.where(carried, _KW_CARRIED, _KW_TOO_COMMON).astype(np.int8)
        return carried

    def _links(self, link_counts: np.ndarray) -> Ragged:
        """``links``: ``index.resolve_links`` over every slot, as rows (slot order, both directions)."""
        id_keys = self._id_keys
        target_of = np.fromiter(
            (id_keys.get(key, -1) for key in self._link_ids), dtype=np.int64, count=len(self._link_ids)
        )
        sources = _owners(link_counts).astype(np.int64)
        targets = target_of[np.frombuffer(self._link_flat, dtype=np.int32)]
        kept = (targets >= 0) & (targets != sources)
        sources, targets = sources[kept], targets[kept]
        # resolve_links appends, per link in slot order, the target to the source's row then the
        # source to the target's row: interleaved, those appends sorted stably by row are the rows.
        owners = np.stack((sources, targets), axis=1).ravel()
        values = np.stack((targets, sources), axis=1).ravel()
        return _ragged(owners, values, self._n)


def _keyword_heads(
    keyword_keys: list[str], carried: np.ndarray, vocabulary: Mapping[str, int], doc_freq: np.ndarray
) -> tuple[StrTable, Ragged]:
    """``keywords.heads``: each carried keyword filed under its rarest term (``RouterIndex.keywords_by_rarest``)."""
    column = vocabulary.get
    dfs = np.asarray(doc_freq).tolist()  # read as Python ints: numpy scalar indexing costs more

    def rarity(term: str) -> tuple[int, str]:
        col = column(term)
        return (0 if col is None else dfs[col]), term

    heads: dict[str, int] = {}
    head_of = array("i")
    carried_ids = np.flatnonzero(carried).tolist()
    for kw_id in carried_ids:
        terms = keyword_keys[kw_id].split(_SEP)
        rarest = terms[0] if len(terms) == 1 else min(terms, key=rarity)
        head = heads.get(rarest)
        if head is None:
            head = heads[rarest] = len(heads)
        head_of.append(head)
    rows = _ragged(np.frombuffer(head_of, dtype=np.int32), np.asarray(carried_ids, dtype=np.int32), len(heads))
    return StrTable.build(list(heads)), rows


def _typo_tables(vocabulary: Mapping[str, int]) -> tuple[StrTable, Ragged]:
    """``typos``: the table ``typos.TypoExpander`` prepares (variant → the terms filed under it, as term ids),
    as one key per variant and flat (variant, term) pairs instead of a list of terms per variant."""
    variants: dict[str, int] = {}
    variant_of, term_of = array("i"), array("i")
    for term, filed_under in typo_filing(vocabulary):
        for key in filed_under:
            row = variants.get(key)
            if row is None:
                row = variants[key] = len(variants)
            variant_of.append(row)
        term_of.extend([vocabulary[term]] * len(filed_under))
    keys = list(variants)
    del variants
    rows = _ragged(np.frombuffer(variant_of, dtype=np.int32), np.frombuffer(term_of, dtype=np.int32), len(keys))
    del variant_of, term_of
    return StrTable.build(keys), rows
