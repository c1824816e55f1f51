"""A small delta over a (memory-mapped) base BM25 index: edits without a rebuild.

An edit of a few packages does not rebuild the base: the merged index is the
base's postings, minus the documents that are no longer live (*dead*: removed,
or replaced by a new revision), plus the postings of the new revisions (a
few documents, built in milliseconds). A replaced entry keeps its slot (its
position in catalog order); a new entry takes a slot after the base's.

Statistics stay exact. BM25+ weights depend on N, avgdl and df(t), which an
edit changes for every document, so a merged index cannot use the base's
precomputed weights. It recomputes, *for the query's terms only*, each
posting's weight from the stored raw frequency (``tf``), the document length
and the merged corpus's N, avgdl and df: the same formula, in the same
order of floating-point operations, as a fresh build over the same entries,
so scores are bit-identical to it. The price is per query while a delta is
live (no MaxScore pruning, a gather and a few vector operations per query
term); the background compaction (a new base segment) removes it.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .bm25 import DocRows, SparseBM25Index, _as_weighted
from common.text import analyze

from .entries import KIND_RULE, EntryLike
from .fusion import estimate_tokens
from .postings import weighted_triplets
from .index_tables import LinkKeys
from .tables import Overlay, OverlaySeq


# Postings whose merged weights a delta index keeps between questions (16 bytes each: ~64 MB).
_CACHE_POSTINGS = 4_000_000


class MergedCounts(Mapping):
    """term → document frequency of the merged corpus (terms with none are absent)."""

    def __init__(self, base: SparseBM25Index, changed: dict[str, int]):
        self._vocabulary = base.vocabulary
        self._doc_freq = base.doc_freq
        self._changed = changed  # merged df of every term the delta touches (0: gone)
        self._len: int | None = None

    def __getitem__(self, term: str) -> int:
        df = self._changed.get(term)
        if df is None:
            return int(self._doc_freq[self._vocabulary[term]])
        if df <= 0:
            raise KeyError(term)
        return df

    def __contains__(self, term: object) -> bool:
        df = self._changed.get(term)  # type: ignore[call-overload]
        return df > 0 if df is not None else term in self._vocabulary

    def __iter__(self) -> Iterator[str]:
        changed = self._changed
        for term in self._vocabulary:
            if changed.get(term, 1) > 0:
                yield term
        for term, df in changed.items():
            if df > 0 and term not in self._vocabulary:
                yield term

    def __len__(self) -> int:
        if self._len is None:
            self._len = sum(1 for _ in self)
        return self._len


class MergedBM25Index:
    """The query API of ``SparseBM25Index`` over base + delta − dead documents, exact statistics."""

    def __init__(
        self,
        base: SparseBM25Index,
        *,
        n_slots: int,
        dead: np.ndarray,
        delta_entries: Sequence[tuple[int, EntryLike]],
        dead_entries: Sequence[EntryLike],
        field_weights: Mapping[str, float],
    ):
        self.base = base
        self.k1, self.b, self.delta = base.k1, base.b, base.delta
        self.n_slots = n_slots
        self.changed_count = len(delta_entries) + len(set(dead.tolist()) - {s for s, _ in delta_entries})
        # Base documents whose base postings no longer count (removed or replaced).
        self.base_dead = np.zeros(n_slots, dtype=bool)
        self.base_dead[dead] = True
        # Postings of the delta documents: term → (slots, raw weighted frequencies).
        vocab, terms, docs, values, lengths = weighted_triplets([e for _, e in delta_entries], field_weights)
        slots = np.asarray([s for s, _ in delta_entries], dtype=np.int64)
        by_term = np.argsort(terms, kind="stable")
        names = sorted(vocab, key=vocab.__getitem__)
        bounds = np.searchsorted(terms[by_term], np.arange(len(names) + 1))
        self.delta_postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for col, term in enumerate(names):
            picked = by_term[bounds[col] : bounds[col + 1]]
            if picked.size:
                self.delta_postings[term] = (slots[docs[picked]], values[picked])
        # Merged document lengths in slot order (dead slots 0): the slot order is
        # the catalog order, so avgdl sums exactly what a fresh build sums.
        self.lengths = np.zeros(n_slots, dtype=np.float64)
        self.lengths[: base.n_docs] = base.lengths
        self.lengths[base.n_docs :] = 0.0
        self.lengths[dead] = 0.0
        self.lengths[slots] = lengths
        self.live = np.zeros(n_slots, dtype=bool)
        self.live[: base.n_docs] = True
        self.live[dead] = False
        self.live[slots] = True
        live = self.live
        self.n_docs = int(live.sum())
        self.avgdl = float(self.lengths[live].sum()) / self.n_docs if self.n_docs else 0.0
        if self.avgdl > 0:
            self.norm = self.k1 * (1 - self.b + self.b * self.lengths / self.avgdl)
        else:
            self.norm = np.full(n_slots, self.k1)
        # df of every term a dead or delta document holds.
        removed: dict[str, int] = {}
        if dead_entries:
            dvocab, dterms, _, _, _ = weighted_triplets(list(dead_entries), field_weights)
            dnames = sorted(dvocab, key=dvocab.__getitem__)
            for col, count in enumerate(np.bincount(dterms, minlength=len(dnames)).tolist()):
                removed[dnames[col]] = count
        changed: dict[str, int] = {}
        for term in {*removed, *self.delta_postings}:
            before = int(base.doc_freq[base.vocabulary[term]]) if term in base.vocabulary else 0
            added = self.delta_postings[term][0].size if term in self.delta_postings else 0
            changed[term] = before - removed.get(term, 0) + added
        self.vocabulary = MergedCounts(base, changed)
        self._terms: dict[str, tuple | None] = {}
        self._cached_postings = 0
        self._doc_rows = DocRows(self.n_slots)

    # ------------------------------------------------------------------ terms

    def df(self, term: str) -> int:
        return self.vocabulary.get(term, 0)

    def idf(self, term: str) -> float:
        found = self._term(term)
        return found[3] if found is not None else 0.0

    def _idf(self, df: int) -> float:
        # numpy's log over an array, as the build computes it: the same bits.
        return float(np.log(np.array([(self.n_docs + 1) / df]))[0])

    @property
    def max_idf(self) -> float:
        return math.log(self.n_docs + 1) if self.n_docs else 0.0

    def vocabulary_df(self) -> Mapping[str, int]:
        return self.vocabulary

    def _term(self, term: str):
        """(slots, weights, best weight) of a live term, weights with the merged statistics; cached."""
        try:
            return self._terms[term]
        except KeyError:
            pass
        df = self.vocabulary.get(term, 0)
        found = None
        if df:
            idf = self._idf(df)
            k1 = self.k1
            parts_docs, parts_weights = [], []
            col = self.base.vocabulary.get(term)
            if col is not None:
                p = self.base._postings
                start, end = int(p.indptr[col]), int(p.indptr[col + 1])
                docs = np.asarray(p.indices[start:end], dtype=np.int64)
                tf = np.asarray(self.base.tf[start:end], dtype=np.float64)
                keep = ~self.base_dead[docs]
                docs, tf = docs[keep], tf[keep]
                # The build's formula and operation order (bm25._from_triplets).
                parts_docs.append(docs)
                parts_weights.append(tf * (idf * (k1 + 1) / (tf + self.norm[docs])))
            if term in self.delta_postings:
                docs, tf = self.delta_postings[term]
                parts_docs.append(docs)
                parts_weights.append(tf * (idf * (k1 + 1) / (tf + self.norm[docs])))
            docs = np.concatenate(parts_docs) if len(parts_docs) > 1 else parts_docs[0]
            weights = np.concatenate(parts_weights) if len(parts_weights) > 1 else parts_weights[0]
            if len(parts_docs) > 1:
                order = np.argsort(docs, kind="stable")
                docs, weights = docs[order], weights[order]
            found = (docs, weights, float(weights.max()) if weights.size else 0.0, idf)
        size = found[0].size if found is not None else 0
        if found is not None and self._cached_postings + size <= _CACHE_POSTINGS:  # known terms only
            self._terms[term] = found
            self._cached_postings += size
        return found

    def doc_row(self, term: str) -> np.ndarray | None:
        """One bool per slot: does it hold ``term``? None when unknown or past the budget (``SparseBM25Index.doc_row``)."""
        return self._doc_rows.get(term, self._holders)

    def _holders(self, term: str) -> np.ndarray | None:
        found = self._term(term)
        return None if found is None else found[0]

    def contains(self, term: str, docs: np.ndarray) -> np.ndarray:
        docs = np.asarray(docs, dtype=np.int64)
        found = self._term(term)
        if found is None or found[0].size == 0 or docs.size == 0:
            return np.zeros(len(docs), dtype=bool)
        postings = found[0]
        at = np.minimum(postings.searchsorted(docs), postings.size - 1)
        return postings[at] == docs

    # ----------------------------------------------------------------- scores

    def _accumulate(self, weights: Iterable[tuple[str, float]]) -> tuple[np.ndarray, float]:
        acc = np.zeros(self.n_slots, dtype=np.float64)
        floor = 0.0
        for term, w in weights:
            found = self._term(term)
            if found is None:
                continue
            acc[found[0]] += found[1] * w
            floor += self.delta * found[3] * w
        return acc, floor

    def match_scores(self, query_tokens) -> np.ndarray:
        return self._accumulate(_as_weighted(query_tokens).items())[0]

    def scores(self, query_tokens, candidates=None) -> np.ndarray:
        acc, floor = self._accumulate(_as_weighted(query_tokens).items())
        if candidates is not None:
            acc = acc[np.asarray(candidates, dtype=np.int64)]
        return acc + floor

    def top_k(self, query_tokens, k: int, candidates=None) -> list[tuple[int, float]]:
        if k <= 0 or self.n_docs == 0:
            return []
        weights = _as_weighted(query_tokens)
        if candidates is not None:
            acc, floor = self._accumulate(weights.items())
            pool = np.asarray(candidates, dtype=np.int64)
            pool = pool[acc[pool] > 0]
        else:
            # The base's term order (by decreasing bound), so each document's
            # score is the same sum, in the same order, as in a fresh build.
            terms = [(t, w) for t, w in weights.items() if w > 0 and self._term(t) is not None]
            floor = sum(self.delta * self._term(t)[3] * w for t, w in terms)  # in query order, as the base
            terms.sort(key=lambda tw: -self._term(tw[0])[2] * tw[1])
            acc, _ = self._accumulate(terms)
            pool = np.flatnonzero(acc)
        if pool.size == 0:
            return []
        values = acc[pool]
        if pool.size > k:
            keep = np.argpartition(-values, k)[:k]
            pool, values = pool[keep], values[keep]
        order = np.lexsort((pool, -values))
        return [(int(pool[i]), float(values[i] + floor)) for i in order]


# ------------------------------------------------------------ router index


def _keyword_terms(kw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(analyze(kw)))


def catalog_changes(base, entries: Sequence[EntryLike]) -> tuple[list[tuple[int, EntryLike]], list[int]] | None:
    """(changed or added entries with their slots, removed base slots) from ``base`` to ``entries``.

    None when the entries kept from the base changed order (a fresh build
    then orders ties differently) or an ID appears twice.
    """
    position = base.position
    base_entries = base.entries
    n_base = len(base_entries)
    # IDs unique in the base (as a catalog's are): an entry found at the slot after the last one is
    # at its position, without a lookup (a mapped position table hashes every key it is asked).
    in_order = len(position) == n_base
    changed: list[tuple[int, EntryLike]] = []
    seen: set[int] = set()
    next_slot = n_base
    last = -1
    for e in entries:
        following = last + 1
        if in_order and following < n_base and base_entries[following].package_id == e.package_id:
            slot = following
        else:
            slot = position.get(e.package_id)
        if slot is None:
            changed.append((next_slot, e))
            next_slot += 1
            continue
        if slot <= last or slot in seen:
            return None
        last = slot
        seen.add(slot)
        if e is not base_entries[slot] and e != base_entries[slot]:
            changed.append((slot, e))
    removed = [slot for slot in range(len(base_entries)) if slot not in seen] if len(seen) < len(base_entries) else []
    return changed, removed


def index_with_edits(index, entries: Sequence[EntryLike], *, version: int, max_changes: int):
    """A router index for ``entries`` made of ``index``'s base and a delta; None when a full build is due.

    A full build is due when more than ``max_changes`` entries differ from the
    base, when kept entries changed order, or when the base keeps no raw
    frequencies. The delta is always taken against the base (deltas do not stack).
    """
    from .index import RouterIndex, entry_link_keys  # index.py does not import us

    started = time.perf_counter()
    base = index.delta_base or index
    if getattr(base.bm25, "tf", None) is None or not isinstance(base.bm25, SparseBM25Index):
        return None
    found = catalog_changes(base, entries)
    if found is None:
        return None
    changed, removed = found
    if len(changed) + len(removed) > max_changes:
        return None
    n_base = len(base.entries)
    replaced = [slot for slot, _ in changed if slot < n_base]
    dead = sorted({*replaced, *removed})
    n_slots = n_base + sum(1 for slot, _ in changed if slot >= n_base)

    new = object.__new__(RouterIndex)
    new.__dict__.update(base.__dict__)
    new.delta_base = base
    new.version = version
    new.source = None
    # The base's body token counts (``body_token_counts``) hold for the slots no edit touched.
    new._body_tokens = {slot: estimate_tokens(e.body) for slot, e in changed}
    new.__dict__.pop("_field_terms", None)
    # Lazy per-index caches of the query path (signals.py, shaping.py) describe the base's entries.
    for cache in ("_slots_by_term", "_keywords_matched", "_delivery_heads", "_strict_rule_set", "_listed_apart"):
        new.__dict__.pop(cache, None)
    # The base's entry vectors are aligned with the base's entries: the owner attaches the new ones.
    new.dense = None
    new.entries = list(base.entries)
    for slot, e in changed:
        if slot < n_base:
            new.entries[slot] = e
        else:
            new.entries.append(e)
    new.bm25 = MergedBM25Index(
        base.bm25,
        n_slots=n_slots,
        dead=np.asarray(dead, dtype=np.int64),
        delta_entries=changed,
        dead_entries=[base.entries[s] for s in dead],
        field_weights=base.config.field_weights,
    )
    live = new.bm25.live
    new.live_count = int(live.sum())
    _patch_names(new, base, changed, dead)
    _patch_keywords(new, base, changed, dead)
    new.link_keys = OverlaySeq(base.link_keys)
    for slot, e in changed:
        keys = entry_link_keys(e)
        if slot < n_base:
            new.link_keys[slot] = keys
        else:
            new.link_keys.append(keys)
    new.links = _patch_links(new, base, [slot for slot, _ in changed], dead, live)
    new.strict_rules = [
        i for i in np.flatnonzero(live).tolist() if new.entries[i].kind == KIND_RULE and new.entries[i].strict
    ]
    vocabulary = new.bm25.vocabulary_df()
    new.typos = base.typos.extended(vocabulary, [t for t in new.bm25.delta_postings if t not in base.bm25.vocabulary])
    new.expander = new._build_expander(vocabulary) if base.expander is not None else None
    if base.questions is not None:
        new.questions = base.questions.with_edits(changed, dead, base.entries, n_slots)
    elif any(getattr(e, "example_questions", ()) for _, e in changed):
        new.questions = new._build_questions()
    new.content_digest = _delta_digest(base, changed, removed)
    new.build_ms = (time.perf_counter() - started) * 1000
    return new


def _delta_digest(base, changed, removed) -> str:
    from .index import entries_digest

    digest = hashlib.sha1(base.content_digest.encode())
    digest.update(entries_digest([e for _, e in changed]).encode())
    digest.update(repr([(slot) for slot, _ in changed] + [-1] + list(removed)).encode())
    return digest.hexdigest()[:16]


def _slots_linking_to(link_keys, keys: set[str]) -> set[int]:
    """Slots whose body links to one of ``keys`` (by key, resolved or not)."""
    if not keys:
        return set()
    if isinstance(link_keys, LinkKeys):  # mapped: one vectorised pass over the key ids
        ids = [i for i in (link_keys.keys.find(k) for k in keys) if i >= 0]
        if not ids:
            return set()
        rows = link_keys.rows.arrays
        at = np.flatnonzero(np.isin(np.asarray(rows["values"]), ids))
        return set((np.searchsorted(np.asarray(rows["ptr"]), at, side="right") - 1).tolist())
    return {i for i, targets in enumerate(link_keys) if not keys.isdisjoint(targets)}


def _patch_links(new, base, changed: list[int], dead: list[int], live: np.ndarray):
    """The wiki-link graph of the delta: the base's, with the lists of the entries an edit touches redone.

    ``resolve_links`` over every live slot gives the same lists (a test compares): an entry's list is its
    own targets at its slot and each entry linking to it at that entry's slot, in slot order, so only the
    lists of entries whose out- or in-links changed differ from the base's.
    """
    id_keys = new.id_keys
    moved = {k for k in (*id_keys._set, *id_keys._gone) if base.id_keys.get(k) != id_keys.get(k)}
    sources = {*changed, *dead, *_slots_linking_to(base.link_keys, moved)}
    n_base = len(base.entries)
    targets: dict[int, list[int]] = {}

    def new_targets(i: int) -> list[int]:
        found = targets.get(i)
        if found is None:
            found = targets[i] = (
                [j for j in (id_keys.get(k) for k in new.link_keys[i]) if j is not None and j != i] if live[i] else []
            )
        return found

    touched = set(sources)
    for i in sources:
        if i < n_base:
            touched.update(j for j in (base.id_keys.get(k) for k in base.link_keys[i]) if j is not None and j != i)
        touched.update(new_targets(i))
    links = Overlay(base.links)
    for x in touched:
        if not live[x]:
            if x in links:
                del links[x]
            continue
        candidates = {x, *(i for i in sources if x in new_targets(i))}
        if x < n_base:
            candidates.update(i for i in base.links.get(x, ()) if live[i])
        out: list[int] = []
        for i in sorted(candidates):
            if i == x:
                out.extend(new_targets(x))
            else:
                out.extend([i] * new_targets(i).count(x))
        if out:
            links[x] = out
        elif x in links:
            del links[x]
    return links


def _patch_names(new, base, changed, dead) -> None:
    """IDs/aliases, positions and semantic IDs: drop the dead slots', add the changed entries'."""
    from .index import package_key

    # Overlays: the edits only, over the base's tables (dicts, or arrays mapped from its segment).
    new.position = Overlay(base.position)
    new.id_keys = Overlay(base.id_keys)
    new.semantic = Overlay(base.semantic)
    touched_semantic: set[str] = set()
    for slot in dead:
        old = base.entries[slot]
        if new.position.get(old.package_id) == slot:
            del new.position[old.package_id]
        for name in (old.package_id, *old.aliases):
            key = package_key(name)
            if key and new.id_keys.get(key) == slot:
                del new.id_keys[key]
        touched_semantic.update(sid.lower() for sid in old.semantic_ids)
    for slot, e in changed:
        new.position[e.package_id] = slot
        for name in (e.package_id, *e.aliases):
            key = package_key(name)
            if key:
                new.id_keys.setdefault(key, slot)
        touched_semantic.update(sid.lower() for sid in e.semantic_ids)
    dead_set = set(dead)
    additions: dict[str, list[int]] = {}
    for slot, e in changed:
        for sid in e.semantic_ids:
            additions.setdefault(sid.lower(), []).append(slot)
    for sid in touched_semantic:
        slots = sorted({*(s for s in base.semantic.get(sid, ()) if s not in dead_set), *additions.get(sid, ())})
        if slots:
            new.semantic[sid] = slots
        else:
            new.semantic.pop(sid, None)


def _patch_keywords(new, base, changed, dead) -> None:
    """Curated keyword maps: the dead slots leave their keywords' carriers, the changed entries join theirs."""
    new.keyword_entries = Overlay(base.keyword_entries)
    new.keyword_ids = Overlay(base.keyword_ids)
    new.keywords_by_rarest = Overlay(base.keywords_by_rarest)
    new.entry_keywords = OverlaySeq(base.entry_keywords)
    carriers: dict[tuple[str, ...], set[int]] = {}

    def group(terms: tuple[str, ...]) -> set[int]:
        if terms not in carriers:
            carriers[terms] = set(new.keyword_entries.get(terms, np.zeros(0, dtype=np.int64)).tolist())
        return carriers[terms]

    for slot in dead:
        for kw in base.entries[slot].keywords:
            terms = _keyword_terms(kw)
            if terms:
                group(terms).discard(slot)
    n_base = len(base.entries)
    for slot, e in changed:
        analyzed = []
        for kw in e.keywords:
            terms = _keyword_terms(kw)
            if terms:
                group(terms).add(slot)
                analyzed.append((new.keyword_ids.setdefault(terms, len(new.keyword_ids)), kw))
        if slot < n_base:
            new.entry_keywords[slot] = tuple(analyzed)
        else:
            new.entry_keywords.append(tuple(analyzed))
    for terms, slots in carriers.items():
        if terms not in base.keywords_too_common:  # left to BM25 in the base: a few edits do not change that
            _keyword_group_set(new, terms, slots)


def _keyword_group_set(new, terms: tuple[str, ...], slots: set[int]) -> None:
    if slots:
        existed = terms in new.keyword_entries
        new.keyword_entries[terms] = np.array(sorted(slots), dtype=np.int64)
        if not existed:
            rarest = min(terms, key=lambda t: (new.bm25.df(t), t))
            new.keywords_by_rarest[rarest] = [*new.keywords_by_rarest.get(rarest, ()), terms]
    elif terms in new.keyword_entries:
        del new.keyword_entries[terms]
        for head in dict.fromkeys(terms):  # a keyword is filed under one of its own terms
            groups = new.keywords_by_rarest.get(head, ())
            if terms in groups:
                new.keywords_by_rarest[head] = [g for g in groups if g != terms]
