"""Catalog entries → BM25F triplets (term, document, weighted frequency), fast.

The index build used to analyze every field of every entry token by token in
Python and count terms in one dict per entry: at 100,000 entries that loop
was most of a ~35 s (CPU) build. Here a text is counted by whitespace-separated
chunk in C, each distinct chunk of the corpus is analyzed once, and the
per-(document, term) counting is done by numpy per batch of entries.

The result is the same as the per-entry loop (``RouterIndex._weighted_docs``
before this module): term ids are assigned in order of first appearance
(entry by entry, fields in ``FIELDS`` order, tokens in text order), and a
term's weighted frequency is ``Σ_f w_f·count_f`` added field by field in that
same order, so the sums are bit-identical. Document lengths are the sum of
a document's weighted frequencies; with the default (dyadic) field weights
every partial sum is exact, so the summation order does not matter.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

from common.text import analyze, analyze_identifier

from .entries import EntryLike

# BM25F fields in the order their terms are first seen (the vocabulary's order).
FIELDS = ("id", "aliases", "title", "keywords", "summary", "body", "search_terms")
_IDENTIFIER_FIELDS = frozenset({"id", "aliases"})
_MULTI_TEXT_FIELDS = frozenset({"keywords", "search_terms"})
# Entries per numpy counting pass: bounds the transient token arrays (~1M tokens).
CHUNK_ENTRIES = 4096


def _field_texts(e: EntryLike, name: str) -> Sequence[str]:
    if name == "id":
        return (e.package_id,)
    if name == "aliases":
        return e.aliases
    if name == "title":
        return (e.title,)
    if name == "keywords":
        return e.keywords
    if name == "summary":
        return (e.summary,)
    if name == "body":
        return (e.body,)
    return getattr(e, "search_terms", ())


class _Chunks(dict):
    """chunk → id; a chunk met for the first time is analyzed and registered (in order of appearance)."""

    def __init__(self, table: _TermTable):
        super().__init__()
        self.table = table

    def __missing__(self, chunk: str) -> int:
        return self.table._register(chunk)


class _TermTable:
    """Texts → chunk ids; chunk → term ids; term → id.

    Tokens never span whitespace, so a text's tokens are those of its
    whitespace-separated chunks in order. Each distinct chunk of the corpus
    ("preço,", "[[PKG_000123]]") is analyzed once and remembered as an id
    with its term ids (CSR arrays): after that, a batch of texts costs
    ``str.split`` and a ``map`` over a dict, C-level work per token.
    """

    def __init__(self):
        self.vocabulary: dict[str, int] = {}
        self.chunks = _Chunks(self)
        self.chunk_ptr = array("q", [0])
        self.chunk_terms = array("i")

    def _term_id(self, term: str) -> int:
        return self.vocabulary.setdefault(term, len(self.vocabulary))

    def _register(self, chunk: str) -> int:
        chunk_id = self.chunks[chunk] = len(self.chunks)
        self.chunk_terms.extend(self._term_id(t) for t in analyze(chunk))
        self.chunk_ptr.append(len(self.chunk_terms))
        return chunk_id

    def texts_chunks(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ids of every text in order, and how many each text has (C-level work per token)."""
        splits = [text.split() for text in texts]
        lens = np.fromiter(map(len, splits), dtype=np.int64, count=len(splits))
        # One pass: a chunk not seen before is registered by ``_Chunks.__missing__`` as the map meets it;
        # read straight into the array (no list of Python ints in between).
        ids = np.fromiter(
            map(self.chunks.__getitem__, chain.from_iterable(splits)), dtype=np.int64, count=int(lens.sum())
        )
        return ids, lens

    def identifier_term_ids(self, text: str, ids: array) -> int:
        terms = analyze_identifier(text)
        ids.extend(self._term_id(t) for t in terms)
        return len(terms)

    def expand(self, chunk_ids: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ids (with their documents) → the term ids they analyze to, in order."""
        ptr = np.frombuffer(self.chunk_ptr, dtype=np.int64)
        flat = _np(self.chunk_terms, np.int32).astype(np.int64)
        starts = ptr[chunk_ids]
        lens = ptr[chunk_ids + 1] - starts
        if lens.size == 0 or lens.max() <= 1:
            keep = lens == 1
            return flat[starts[keep]], docs[keep]
        total = int(lens.sum())
        within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        return flat[np.repeat(starts, lens) + within], np.repeat(docs, lens)


def _np(values: array, dtype) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def weighted_parts(
    entries: Sequence[EntryLike], field_weights: Mapping[str, float], *, body_words: np.ndarray | None = None
) -> tuple[dict[str, int], list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """(vocabulary, parts, doc lengths) of a catalog: ``weighted_triplets`` per batch of entries, not joined.

    Each part is ``(term ids, doc ids, weighted frequencies)`` of one batch, in
    document order (within a document, by term id), one per (term, document)
    with a positive weighted frequency; ``SparseBM25Index.from_parts`` reads them.
    The frequencies are float32 when that holds them exactly (the default, dyadic
    field weights: a count times a weight is a short binary fraction), else float64:
    the parts are the build's largest transient (13.5 M triplets at 100k entries).

    ``body_words`` (an integer array, one slot per entry), when given, is filled with each body's
    number of whitespace-separated words (``len(body.split())``), which the body's tokenization
    counts anyway; left untouched when the body field has no weight (it is not read then).
    """
    table = _TermTable()
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    lengths = np.zeros(len(entries), dtype=np.float64)
    weights = [(name, float(field_weights.get(name, 1.0))) for name in FIELDS]
    for start in range(0, len(entries), CHUNK_ENTRIES):
        chunk = entries[start : start + CHUNK_ENTRIES]
        words = None if body_words is None else body_words[start : start + len(chunk)]
        terms, docs, values = _chunk_triplets(table, chunk, weights, words)
        if values.size:
            lengths[start : start + len(chunk)] += np.bincount(docs, weights=values, minlength=len(chunk))
            docs += start
            parts.append((terms, docs, values))
    return table.vocabulary, parts, lengths


def weighted_triplets(
    entries: Sequence[EntryLike], field_weights: Mapping[str, float]
) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vocabulary, term ids, doc ids, weighted frequencies, doc lengths) of a catalog.

    Triplets come in document order (within a document, by term id), one per
    (term, document) with a positive weighted frequency.
    """
    vocabulary, parts, lengths = weighted_parts(entries, field_weights)
    if not parts:
        empty_i = np.zeros(0, dtype=np.int32)
        return vocabulary, empty_i, empty_i.copy(), np.zeros(0), lengths
    return (
        vocabulary,
        np.concatenate([terms for terms, _, _ in parts]).astype(np.int32, copy=False),
        np.concatenate([docs for _, docs, _ in parts]).astype(np.int32, copy=False),
        np.concatenate([values for _, _, values in parts]).astype(np.float64, copy=False),
        lengths,
    )


def _chunk_triplets(
    table: _TermTable,
    chunk: Sequence[EntryLike],
    weights: list[tuple[str, float]],
    body_words: np.ndarray | None = None,
):
    """Unique (term, local doc) pairs of a chunk with Σ_f w_f·count_f summed field by field
    (and each body's word count into ``body_words``, when given)."""
    n_docs = len(chunk)
    doc_numbers = np.arange(n_docs, dtype=np.int64)
    field_terms: list[tuple[float, np.ndarray, np.ndarray]] = []
    for name, w in weights:
        if w == 0:
            continue
        if name in _IDENTIFIER_FIELDS:
            ids, per_doc = array("i"), array("i")
            for e in chunk:
                per_doc.append(sum(table.identifier_term_ids(text, ids) for text in _field_texts(e, name)))
            terms = _np(ids, np.int32).astype(np.int64)
            docs = np.repeat(doc_numbers, _np(per_doc, np.int32))
        else:
            # A field's texts of one entry joined by a space: tokens never span whitespace.
            texts = [
                " ".join(_field_texts(e, name)) if name in _MULTI_TEXT_FIELDS else _field_texts(e, name)[0]
                for e in chunk
            ]
            chunk_ids, lens = table.texts_chunks(texts)
            if name == "body" and body_words is not None:
                body_words[:] = lens
            terms, docs = table.expand(chunk_ids, np.repeat(doc_numbers, lens))
        if terms.size:
            field_terms.append((w, terms, docs))
    n_terms = max(len(table.vocabulary), 1)
    keys_parts: list[np.ndarray] = []
    value_parts: list[np.ndarray] = []
    for w, terms, docs in field_terms:
        unique, counts = np.unique(docs * n_terms + terms, return_counts=True)
        keys_parts.append(unique)
        value_parts.append(w * counts.astype(np.float64))  # w·count, as the per-entry loop computed it
    if not keys_parts:
        empty = np.zeros(0, dtype=np.int32)
        return empty, empty.copy(), np.zeros(0)
    keys = np.concatenate(keys_parts)
    values = np.concatenate(value_parts)
    # A stable sort keeps each key's field contributions in field order: the
    # sums below add them in the order the per-entry loop did.
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    summed = np.add.reduceat(values, starts) if len(starts) < len(keys) else values
    unique = keys[starts]
    positive = summed > 0
    unique, summed = unique[positive], summed[positive]
    narrow = summed.astype(np.float32)
    if np.array_equal(narrow, summed):
        summed = narrow  # exact: half the bytes while the batch waits to be placed
    del narrow
    return (unique % n_terms).astype(np.int32), (unique // n_terms).astype(np.int32), summed
