"""Sparse in-memory BM25+ index.

Variant: BM25+ (Lv & Zhai 2011) exactly as ``rank_bm25.BM25Plus`` computes it::

    idf(t)      = ln((N + 1) / df(t))                      > 0 for every df ≤ N
    score(d, q) = Σ_t∈q idf(t) · (δ + tf·(k1+1) / (tf + k1·(1 − b + b·|d|/avgdl)))

Why not ``BM25Okapi``: its IDF ``ln((N − df + 0.5)/(df + 0.5))`` is zero for a
term found in exactly half the documents and negative above that
(rank_bm25 floors it at ``ε·mean idf``); on small or pre-filtered corpora
that gives all-zero or inverted rankings. BM25+'s IDF is strictly positive,
and it is always computed over the *whole* corpus here even when a caller
restricts scoring to a few candidate documents.

The δ term adds ``δ·Σ idf(t)`` to every document, matched or not; it is a
per-query constant, so only the sparse part needs per-document work. The
index stores, column per term (CSC), the precomputed weight
``idf·tf·(k1+1)/(tf + k1·norm(d))`` of every (term, document) pair; a query
touches only the postings of its own terms.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .sorting import stable_order

TermWeights = Iterable[tuple[str, float]]


def _as_weighted(query_tokens: Iterable[str] | Mapping[str, float]) -> dict[str, float]:
    """Query tokens → term: weight. Repeated tokens count again (as rank_bm25 does)."""
    if isinstance(query_tokens, Mapping):
        return {t: float(w) for t, w in query_tokens.items()}
    weights: dict[str, float] = {}
    for token in query_tokens:
        weights[token] = weights.get(token, 0.0) + 1.0
    return weights


_CHUNK = 1 << 20
# Up to this many documents, top-k walks every posting instead of pruning (MaxScore).
_SMALL_CORPUS = 4096
# Bytes of per-term document rows (doc_row) an index keeps.
_DOC_ROWS_BYTES = 8 << 20
# Bytes of per-term score rows (ScoreRows) a small index keeps: 1,024 terms at 1,000 documents.
_SCORE_ROWS_BYTES = 8 << 20
# Past this many documents the budget holds too few rows to pay (80 at 100k) and a row is a
# cache-missing 100 KB array: coverage uses ``contains`` there, as before.
_DOC_ROWS_MAX_DOCS = 16_384


def _terms_of_postings(indptr: np.ndarray, start: int, end: int) -> np.ndarray:
    """The term (column) of each posting in ``[start, end)`` of CSC ``indptr``, as one ``np.repeat``."""
    first = int(np.searchsorted(indptr, start, side="right")) - 1
    last = int(np.searchsorted(indptr, end - 1, side="right")) - 1
    counts = np.minimum(indptr[first + 1 : last + 2], end) - np.maximum(indptr[first : last + 1], start)
    return np.repeat(np.arange(first, last + 1), counts)


class DocRows:
    """Per-term rows of one bool per document (does it hold the term?), kept for the first terms
    asked within ``_DOC_ROWS_BYTES`` in all, and only for corpora of at most ``_DOC_ROWS_MAX_DOCS``
    documents (``SparseBM25Index.doc_row`` and the delta's). Past either bound ``get`` returns
    None and the caller looks the term up another way (``contains``)."""

    __slots__ = ("n", "rows", "bytes")

    def __init__(self, n: int):
        self.n = n
        self.rows: dict[str, np.ndarray] = {}
        self.bytes = 0

    def get(self, term: str, holders) -> np.ndarray | None:
        """The term's row; ``holders(term)``: the documents holding it (an index array), None if unknown."""
        row = self.rows.get(term)
        if row is None:
            if self.n > _DOC_ROWS_MAX_DOCS or self.bytes + self.n > _DOC_ROWS_BYTES:
                return None
            docs = holders(term)
            if docs is None:
                return None
            row = np.zeros(self.n, dtype=bool)
            row[docs] = True
            self.rows[term] = row
            self.bytes += self.n
        return row


class ScoreRows:
    """Per-term rows of every document's weight for the term (0.0 where it does not hold it), kept for
    the first terms asked within ``_SCORE_ROWS_BYTES`` in all, on corpora top-k walks whole
    (``_SMALL_CORPUS``). Adding a term's row to a running sum adds the same numbers, per document and
    in the same order, as adding its postings (a document that does not hold it gains 0.0, which
    leaves any sum as it was), with one vectorised add instead of gathering the postings."""

    __slots__ = ("n", "rows", "bytes")

    def __init__(self, n: int):
        self.n = n
        self.rows: dict[int, np.ndarray] = {}
        self.bytes = 0

    def get(self, start: int, end: int, postings: _Postings) -> np.ndarray | None:
        """The row of the term whose postings are ``[start, end)``; None past the budget."""
        row = self.rows.get(start)
        if row is None:
            if self.n > _SMALL_CORPUS or self.bytes + 8 * self.n > _SCORE_ROWS_BYTES:
                return None
            row = np.zeros(self.n, dtype=np.float64)
            row[postings.indices[start:end]] = postings.data[start:end]
            self.rows[start] = row
            self.bytes += 8 * self.n
        return row


def _np(values: array, dtype) -> np.ndarray:
    """A typed array as numpy without a copy."""
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


@dataclass(frozen=True, slots=True)
class _Postings:
    indptr: np.ndarray  # column pointers (per term)
    indices: np.ndarray  # document index of each posting
    data: np.ndarray  # precomputed sparse BM25+ weight of each posting


# A term in at least 1/this of the documents is "common": past MaxScore's pruning point its
# postings are looked up for the seen documents through a bitset with rank (_TermBits), in
# time proportional to the seen documents instead of to its (long) postings list.
_COMMON_TERM_SHARE = 16


@dataclass(frozen=True, slots=True)
class _TermBits:
    """One term's postings as a bitset over documents, with the number of postings before each word.

    The position of document d in the term's (sorted) postings is
    ``before[d >> 6] + popcount(words[d >> 6] & (2**(d & 63) - 1))``: the same slot of
    ``data`` a binary search would find, so scores are the same numbers. N/4 bytes a term.
    """

    words: np.ndarray  # uint64, bit d & 63 of word d >> 6 set when d holds the term
    before: np.ndarray  # int64, postings in the words before each word

    @classmethod
    def build(cls, postings: np.ndarray, n_docs: int) -> _TermBits:
        n_words = (n_docs + 63) // 64
        dense = np.zeros(n_words * 64, dtype=bool)
        dense[postings] = True
        words = np.packbits(dense, bitorder="little").view("<u8")
        counts = np.bitwise_count(words).astype(np.int64)
        before = np.zeros(n_words, dtype=np.int64)
        np.cumsum(counts[:-1], out=before[1:])
        return cls(words, before)

    def positions(self, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For documents ``docs``: the postings positions of those holding the term, and which hold it."""
        docs = docs.astype(np.int64, copy=False)
        at = docs >> 6
        bit = (docs & 63).astype(np.uint64)
        word = self.words[at]
        held = ((word >> bit) & np.uint64(1)).astype(bool)
        below = word & ((np.uint64(1) << bit) - np.uint64(1))
        positions = self.before[at] + np.bitwise_count(below)
        return positions[held], held


class SparseBM25Index:
    """BM25+ over a fixed corpus; immutable once built, safe to share between threads."""

    def __init__(
        self,
        *,
        vocabulary: dict[str, int],
        postings: _Postings,
        idf: np.ndarray,
        doc_freq: np.ndarray,
        n_docs: int,
        k1: float,
        b: float,
        delta: float,
    ):
        self.vocabulary = vocabulary
        self._postings = postings
        self.idf_values = idf
        self.doc_freq = doc_freq
        self.n_docs = n_docs
        self.k1 = k1
        self.b = b
        self.delta = delta
        self._spans: dict[str, tuple[int, int, float, float] | None] = {}
        self._doc_rows = DocRows(n_docs)
        self._score_rows = ScoreRows(n_docs)

    # ------------------------------------------------------------------ build

    @classmethod
    def build(
        cls,
        docs: Sequence[Sequence[str]],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 1.0,
    ) -> SparseBM25Index:
        """Index tokenized documents (term frequency = occurrences)."""
        vocabulary: dict[str, int] = {}
        term_ids = array("i")
        doc_ids = array("i")
        values = array("d")
        lengths = np.empty(len(docs), dtype=np.float64)
        setdefault = vocabulary.setdefault
        for i, doc in enumerate(docs):
            lengths[i] = len(doc)
            for term, count in Counter(doc).items():
                term_ids.append(setdefault(term, len(vocabulary)))
                doc_ids.append(i)
                values.append(count)
        return cls._from_triplets(
            vocabulary,
            _np(term_ids, np.int32),
            _np(doc_ids, np.int32),
            _np(values, np.float64),
            lengths,
            k1=k1,
            b=b,
            delta=delta,
        )

    @classmethod
    def build_weighted(
        cls,
        docs: Iterable[Mapping[str, float]],
        lengths: Sequence[float] | None = None,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        delta: float = 1.0,
    ) -> SparseBM25Index:
        """Index documents given as term → (field-weighted) frequency.

        With frequencies ``Σ_f w_f·tf_f`` and lengths ``Σ_f w_f·|d_f|`` (the
        default: the sum of the frequencies) this is the simple BM25F: fields
        are weighted before saturation, so a term in the title cannot be
        drowned by a long body. ``docs`` may be a generator: each mapping is
        consumed and dropped, and the triplets live in compact typed arrays,
        which keeps the build's peak memory near the index's own size.
        """
        vocabulary: dict[str, int] = {}
        term_ids = array("i")
        doc_ids = array("i")
        values = array("d")
        sums = array("d")
        setdefault = vocabulary.setdefault
        for i, doc in enumerate(docs):
            total = 0.0
            for term, freq in doc.items():
                if freq > 0:
                    term_ids.append(setdefault(term, len(vocabulary)))
                    doc_ids.append(i)
                    values.append(freq)
                    total += freq
            sums.append(total)
        return cls._from_triplets(
            vocabulary,
            _np(term_ids, np.int32),
            _np(doc_ids, np.int32),
            _np(values, np.float64),
            np.asarray(lengths if lengths is not None else sums, dtype=np.float64),
            k1=k1,
            b=b,
            delta=delta,
        )

    @classmethod
    def from_triplets(cls, vocabulary, term_ids, doc_ids, values, lengths, *, k1=1.5, b=0.75, delta=1.0):
        """Index (term id, document, weighted frequency) triplets given in document order."""
        return cls._from_triplets(vocabulary, term_ids, doc_ids, values, lengths, k1=k1, b=b, delta=delta)

    @classmethod
    def _from_triplets(cls, vocabulary, term_ids, doc_ids, values, lengths, *, k1, b, delta):
        """CSC arrays from unique (term, doc, tf) triplets given in document order."""
        return cls._from_parts(vocabulary, [(term_ids, doc_ids, values)], lengths, k1=k1, b=b, delta=delta)

    @classmethod
    def from_parts(cls, vocabulary, parts, lengths, *, k1=1.5, b=0.75, delta=1.0):
        """Index triplets given as consecutive parts ``(term ids, doc ids, weighted frequencies)``, each in
        document order, parts in document order. ``parts`` (a list) is emptied as it is read: each part is
        freed once its postings are placed, so the triplets and the index are not both whole in memory."""
        return cls._from_parts(vocabulary, parts, lengths, k1=k1, b=b, delta=delta)

    @classmethod
    def _from_parts(cls, vocabulary, parts, lengths, *, k1, b, delta):
        """CSC arrays from unique (term, doc, tf) triplets, by a stable counting sort, part by part.

        Triplets arrive in document order, so a stable sort by term leaves each
        term's postings sorted by document (binary searches rely on it): within
        a part a stable argsort by term, across parts each term's next free slot.
        This avoids scipy's COO→CSC copies, which tripled the build's peak memory,
        and a sort of the whole triplet arrays at once.
        """
        n_docs = len(lengths)
        n_terms = len(vocabulary)
        doc_freq = np.zeros(n_terms, dtype=np.int64)
        for term_ids, _, _ in parts:
            doc_freq += np.bincount(term_ids, minlength=n_terms)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        total = int(indptr[-1])
        indices = np.empty(total, dtype=np.int32)
        # Frequencies given exactly as float32 (``postings.weighted_parts`` with dyadic field weights) are
        # placed as float32: that array is the one kept (``tf``), and no float64 copy of it is made.
        narrow = all(values.dtype == np.float32 for _, _, values in parts)
        tf = np.empty(total, dtype=np.float32 if narrow else np.float64)
        slot = indptr[:-1].copy()  # each term's next free posting
        parts.reverse()  # consumed from the end: popping frees each part once placed
        while parts:
            term_ids, doc_ids, values = parts.pop()
            order = stable_order(term_ids)
            terms = term_ids[order]
            starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]]) if terms.size else np.zeros(0, np.int64)
            counts = np.diff(np.r_[starts, terms.size])
            # rank of each triplet among its term's triplets in this part, plus that term's next free slot
            dest = np.arange(terms.size, dtype=np.int64) - np.repeat(starts, counts) + slot[terms]
            indices[dest] = doc_ids[order]
            tf[dest] = values[order]
            slot[terms[starts]] += counts
            del term_ids, doc_ids, values, order, terms, dest
        idf = np.log((n_docs + 1) / np.maximum(doc_freq, 1)) if n_terms else np.zeros(0)
        avgdl = float(lengths.sum()) / n_docs if n_docs else 0.0
        if avgdl > 0:
            norm = k1 * (1 - b + b * lengths / avgdl)
        else:
            norm = np.full(n_docs, k1)
        # The raw weighted frequencies stay (float32 when that is exact, as with the
        # default field weights): a delta segment recomputes weights from them
        # with the merged corpus's statistics (knowledge/retrieval/delta.py).
        if narrow:
            kept_tf = tf
            data = np.empty(total, dtype=np.float64)
        else:
            tf32 = tf.astype(np.float32)
            kept_tf = tf32 if np.array_equal(tf32, tf) else tf.copy()
            del tf32
            data = tf  # overwritten in place below
        # data = idf · tf(k1+1) / (tf + norm), in chunks: full-size temporaries
        # would double the build's peak memory on big catalogs.
        for start in range(0, data.size, _CHUNK):
            end = min(start + _CHUNK, data.size)
            chunk = kept_tf[start:end].astype(np.float64) if narrow else data[start:end]
            term_of = _terms_of_postings(indptr, start, end)
            chunk *= idf[term_of] * (k1 + 1) / (chunk + norm[indices[start:end]])
            if narrow:
                data[start:end] = chunk
        term_max = np.zeros(n_terms)
        nonempty = doc_freq > 0
        if len(data):
            term_max[nonempty] = np.maximum.reduceat(data, indptr[:-1][nonempty])
        index = cls(
            vocabulary=vocabulary,
            postings=_Postings(indptr, indices, np.ascontiguousarray(data)),
            idf=idf,
            doc_freq=doc_freq,
            n_docs=n_docs,
            k1=k1,
            b=b,
            delta=delta,
        )
        index.term_max = term_max  # best weight of each term: the pruning bound
        # Kept for storage and delta segments (knowledge/retrieval/segments.py, delta.py).
        index.lengths = lengths
        index.avgdl = avgdl
        index.tf = kept_tf
        return index

    # ------------------------------------------------------------------ terms

    def idf(self, term: str) -> float:
        span = self.span(term)
        return span[2] if span is not None else 0.0

    def df(self, term: str) -> int:
        col = self.vocabulary.get(term)
        return int(self.doc_freq[col]) if col is not None else 0

    @property
    def max_idf(self) -> float:
        """IDF a term found in one document would have (used for unknown terms)."""
        return math.log(self.n_docs + 1) if self.n_docs else 0.0

    def vocabulary_df(self) -> Mapping[str, int]:
        """term → document frequency: a dict over an in-memory vocabulary, a view over a mapped one."""
        if isinstance(self.vocabulary, dict):
            return {t: int(self.doc_freq[c]) for t, c in self.vocabulary.items()}
        from .tables import DocFreqView

        return DocFreqView(self.vocabulary, self.doc_freq)

    def span(self, term: str) -> tuple[int, int, float, float] | None:
        """(start, end, idf, best weight) of a term's postings as plain Python numbers, or None when unknown.

        Cached per term: the hot path asks the same few terms many times per
        question, and numpy scalar indexing costs more than the dict lookup.
        """
        try:
            return self._spans[term]
        except KeyError:
            pass
        col = self.vocabulary.get(term)
        found = None
        if col is not None:
            indptr = self._postings.indptr
            found = (int(indptr[col]), int(indptr[col + 1]), float(self.idf_values[col]), float(self.term_max[col]))
            self._spans[term] = found  # known terms only: bounded by the vocabulary
        return found

    def doc_row(self, term: str) -> np.ndarray | None:
        """One bool per document: does it hold ``term``? None for an unknown term or past the cache's budget.

        For the coverage of a question's ~80 candidates: one fancy index per term instead of a
        binary search through its postings (``contains``, which the caller falls back to). Rows
        are kept for the first terms asked, up to ``_DOC_ROWS_BYTES`` in all (n_docs bytes a
        term: 8,192 terms at 1,000 documents, 800 at 10,000), on corpora of at most
        ``_DOC_ROWS_MAX_DOCS`` documents.
        """
        return self._doc_rows.get(term, self._holders)

    def _holders(self, term: str) -> np.ndarray | None:
        span = self.span(term)
        return None if span is None else self._postings.indices[span[0] : span[1]]

    def contains(self, term: str, docs: np.ndarray) -> np.ndarray:
        """Boolean per document of ``docs`` (int64 array): does it hold ``term``?"""
        docs = np.asarray(docs, dtype=np.int64)
        span = self.span(term)
        if span is None or span[0] == span[1] or docs.size == 0:
            return np.zeros(len(docs), dtype=bool)
        postings = self._postings.indices[span[0] : span[1]]  # sorted
        at = postings.searchsorted(docs)
        np.minimum(at, span[1] - span[0] - 1, out=at)
        return postings[at] == docs

    # ----------------------------------------------------------------- scores

    def _accumulate(self, weights: dict[str, float]) -> tuple[np.ndarray, float]:
        """Sparse part of every document's score, and the per-query δ floor."""
        acc = np.zeros(self.n_docs, dtype=np.float64)
        floor = 0.0
        p = self._postings
        for term, w in weights.items():
            col = self.vocabulary.get(term)
            if col is None:
                continue
            start, end = p.indptr[col], p.indptr[col + 1]
            # Postings of one term hold each document once: plain fancy-index add is exact.
            acc[p.indices[start:end]] += p.data[start:end] * w
            floor += self.delta * self.idf_values[col] * w
        return acc, floor

    def _accumulate_pruned(self, weights: dict[str, float], k: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Exact top-k candidates without walking every common term's postings (MaxScore).

        Terms are taken by decreasing upper bound (their best posting × query
        weight). Once the k-th best score among the documents seen so far beats
        the sum of the upper bounds of the terms not yet walked, no unseen
        document can enter the top k: the remaining terms are only looked up
        (binary search) for the documents already seen.
        """
        if self.n_docs <= _SMALL_CORPUS:
            return self._accumulate_small(weights)
        p = self._postings
        terms = [(self.vocabulary[t], w) for t, w in weights.items() if t in self.vocabulary and w > 0]
        floor = sum(self.delta * self.idf_values[col] * w for col, w in terms)
        acc = np.zeros(self.n_docs, dtype=np.float64)
        if not terms:
            return acc, np.zeros(0, dtype=np.int64), floor
        terms.sort(key=lambda cw: -self.term_max[cw[0]] * cw[1])
        bounds = [self.term_max[col] * w for col, w in terms]
        seen = np.zeros(self.n_docs, dtype=bool)
        walked = 0
        # The documents seen so far, sorted: kept by merging each walked term's unseen postings
        # (a stable sort of two sorted runs is one linear merge) instead of rescanning `seen`.
        touched = p.indices[0:0]
        while walked < len(terms):
            col, w = terms[walked]
            start, end = p.indptr[col], p.indptr[col + 1]
            docs = p.indices[start:end]
            acc[docs] += p.data[start:end] * w
            if not touched.size:
                touched = docs
            else:
                new = docs[~seen[docs]]
                if new.size:
                    touched = np.sort(np.concatenate((touched, new)), kind="stable")
            seen[docs] = True
            walked += 1
            rest = sum(bounds[walked:])
            if rest <= 0:
                break
            if touched.size >= k and -np.partition(-acc[touched], k - 1)[k - 1] > rest:
                break
        for col, w in terms[walked:]:
            start, end = p.indptr[col], p.indptr[col + 1]
            postings = p.indices[start:end]
            if postings.size == 0:
                continue
            if postings.size * _COMMON_TERM_SHARE >= self.n_docs:
                # A common term: its postings' positions for the seen documents by rank in a bitset.
                positions, held = self._common_term_bits(col).positions(touched)
                acc[touched[held]] += p.data[start + positions] * w
                continue
            if touched.size * 16 > postings.size:
                # Cheaper to add the whole postings list: unseen documents gain
                # score too, but they are not candidates.
                acc[postings] += p.data[start:end] * w
                continue
            at = np.minimum(np.searchsorted(postings, touched), postings.size - 1)
            hit = postings[at] == touched
            acc[touched[hit]] += p.data[start + at[hit]] * w
        return acc, touched.astype(np.int64), floor

    def _accumulate_small(self, weights: dict[str, float]) -> tuple[np.ndarray, np.ndarray, float]:
        """``_accumulate_pruned`` on a small corpus: walking every posting costs less than the pruning's
        bookkeeping. Same terms, floor and term order (by decreasing bound) as the pruned walk, so every
        document's score is the same sum; the cached spans spare numpy scalar reads per term. The terms'
        score rows (``ScoreRows``) when all are kept, else their postings: the same sums either way."""
        span, delta = self.span, self.delta
        walk = []
        floor = 0
        for t, w in weights.items():
            if w > 0:
                found = span(t)
                if found is not None:
                    walk.append((found, w))
                    floor += delta * found[2] * w
        if not walk:
            return np.zeros(self.n_docs, dtype=np.float64), np.zeros(0, dtype=np.int64), floor
        walk.sort(key=lambda sw: -sw[0][3] * sw[1])
        postings = self._postings
        score_row = self._score_rows.get
        rows = [score_row(start, end, postings) for (start, end, _, _), _ in walk]
        if not any(row is None for row in rows):
            # The terms' rows added in walk order: the sums the postings give (ScoreRows), fewer numpy calls.
            acc = rows[0] * walk[0][1]
            for row, (_, w) in zip(rows[1:], walk[1:]):
                acc += row if w == 1.0 else row * w
            return acc, (acc != 0).nonzero()[0], floor  # a bool array's nonzero is the cheaper one
        indices, data = postings.indices, postings.data
        if len(walk) == 1:
            (start, end, _, _), w = walk[0]
            acc = np.zeros(self.n_docs, dtype=np.float64)
            acc[indices[start:end]] += data[start:end] * w
            return acc, np.flatnonzero(acc), floor
        # One bincount over the walked postings in walk order: it adds each document's
        # contributions in that order from 0.0, the same sums as one fancy-index add per term.
        docs = np.concatenate([indices[start:end] for (start, end, _, _), _ in walk])
        weights = np.concatenate([data[start:end] for (start, end, _, _), _ in walk])
        if any(w != 1.0 for _, w in walk):
            # A question's own terms weigh 1.0 (x * 1.0 is x): only expansions and repeats pay for this.
            weights *= np.repeat([w for _, w in walk], [end - start for (start, end, _, _), _ in walk])
        acc = np.bincount(docs, weights=weights, minlength=self.n_docs)
        return acc, (acc != 0).nonzero()[0], floor

    def _common_term_bits(self, col: int) -> _TermBits:
        """The bitset of a common term's postings, built on first use (bounded: few terms are common)."""
        cache = self.__dict__.get("_term_bits")
        if cache is None:
            cache = self.__dict__.setdefault("_term_bits", {})
        bits = cache.get(col)
        if bits is None:
            p = self._postings
            bits = cache[col] = _TermBits.build(p.indices[p.indptr[col] : p.indptr[col + 1]], self.n_docs)
        return bits

    def match_scores(self, query_tokens: Iterable[str] | Mapping[str, float]) -> np.ndarray:
        """Per-document score *without* the δ floor: zero means no query term matched."""
        acc, _ = self._accumulate(_as_weighted(query_tokens))
        return acc

    def scores(
        self,
        query_tokens: Iterable[str] | Mapping[str, float],
        candidates: np.ndarray | Sequence[int] | None = None,
    ) -> np.ndarray:
        """BM25+ score of every document (or of ``candidates``, in their order).

        Equal to ``rank_bm25.BM25Plus.get_scores`` / ``get_batch_scores``. IDF is
        always that of the whole corpus, also when ``candidates`` is given.
        """
        acc, floor = self._accumulate(_as_weighted(query_tokens))
        if candidates is not None:
            acc = acc[np.asarray(candidates, dtype=np.int64)]
        return acc + floor

    def top_k(
        self,
        query_tokens: Iterable[str] | Mapping[str, float],
        k: int,
        candidates: np.ndarray | Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` best (document index, score) pairs, best first.

        Documents holding none of the query terms are never returned: their
        score is only the δ floor every document gets.
        """
        if k <= 0 or self.n_docs == 0:
            return []
        weights = _as_weighted(query_tokens)
        if candidates is not None:
            acc, floor = self._accumulate(weights)
            pool = np.asarray(candidates, dtype=np.int64)
            pool = pool[acc[pool] > 0]
        else:
            acc, pool, floor = self._accumulate_pruned(weights, k)
        if pool.size == 0:
            return []
        values = acc[pool]
        if pool.size > k:
            # argpartition(-s, k), not (s, -k): the latter is ~40x slower on
            # mostly-equal arrays with numpy 2.x (see research/bm25-baselines.md).
            keep = np.argpartition(-values, k)[:k]
            pool, values = pool[keep], values[keep]
        order = np.lexsort((pool, -values))
        return list(zip(pool[order].tolist(), (values[order] + floor).tolist()))
