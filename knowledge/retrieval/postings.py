"""Catalog entries → BM25F triplets (term, document, weighted frequency), fast.

The index build used to analyze every field of every entry token by token in
Python and count terms in one dict per entry: at 100,000 entries that loop
was most of a ~35 s (CPU) build. Here each distinct whitespace-separated
chunk of the corpus is analyzed once, every occurrence becomes term ids
through a C-level ``map`` over a dict, and the counting is done by numpy per
chunk of entries.

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


class _TermTable:
    """Text → the ids of its analyzed terms; term → id in order of first appearance.

    Tokens never span whitespace, so a text's tokens are those of its
    whitespace-separated chunks in order. Each distinct chunk ("preço,",
    "[[PKG_000123]]") is analyzed once and remembered as a tuple of term ids:
    after that, a text costs a ``str.split`` and C-level dict lookups.
    """

    def __init__(self):
        self.vocabulary: dict[str, int] = {}
        self.chunks: dict[str, tuple[int, ...]] = {}

    def _term_id(self, term: str) -> int:
        return self.vocabulary.setdefault(term, len(self.vocabulary))

    def _register(self, chunk: str) -> None:
        self.chunks[chunk] = tuple(self._term_id(t) for t in analyze(chunk))

    def text_term_ids(self, text: str, out: array) -> int:
        """Append the term ids of ``text`` to ``out``; returns how many."""
        chunks = text.split()
        lookup = self.chunks
        before = len(out)
        try:
            out.extend(chain.from_iterable(map(lookup.__getitem__, chunks)))
        except KeyError:
            del out[before:]
            for chunk in chunks:  # in text order: new terms get ids in order of appearance
                if chunk not in lookup:
                    self._register(chunk)
            out.extend(chain.from_iterable(map(lookup.__getitem__, chunks)))
        return len(out) - before

    def identifier_term_ids(self, text: str, out: array) -> int:
        terms = analyze_identifier(text)
        out.extend(self._term_id(t) for t in terms)
        return len(terms)


def _np(values: array, dtype) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def weighted_triplets(
    entries: Sequence[EntryLike], field_weights: Mapping[str, float]
) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vocabulary, term ids, doc ids, weighted frequencies, doc lengths) of a catalog.

    Triplets come in document order (within a document, by term id), one per
    (term, document) with a positive weighted frequency.
    """
    table = _TermTable()
    out_terms: list[np.ndarray] = []
    out_docs: list[np.ndarray] = []
    out_values: list[np.ndarray] = []
    lengths = np.zeros(len(entries), dtype=np.float64)
    weights = [(name, float(field_weights.get(name, 1.0))) for name in FIELDS]
    for start in range(0, len(entries), CHUNK_ENTRIES):
        chunk = entries[start : start + CHUNK_ENTRIES]
        terms, docs, values = _chunk_triplets(table, chunk, weights)
        if values.size:
            lengths[start : start + len(chunk)] += np.bincount(docs, weights=values, minlength=len(chunk))
            out_terms.append(terms)
            out_docs.append(docs + start)
            out_values.append(values)
    if not out_terms:
        empty_i = np.zeros(0, dtype=np.int32)
        return table.vocabulary, empty_i, empty_i.copy(), np.zeros(0), lengths
    return (
        table.vocabulary,
        np.concatenate(out_terms).astype(np.int32, copy=False),
        np.concatenate(out_docs).astype(np.int32, copy=False),
        np.concatenate(out_values),
        lengths,
    )


def _chunk_triplets(table: _TermTable, chunk: Sequence[EntryLike], weights: list[tuple[str, float]]):
    """Unique (term, local doc) pairs of a chunk with Σ_f w_f·count_f summed field by field."""
    n_fields = len(weights)
    ids = [array("i") for _ in range(n_fields)]  # term ids
    per_doc = [array("i") for _ in range(n_fields)]  # how many of them each entry added
    for e in chunk:
        for f, (name, w) in enumerate(weights):
            n = 0
            if w != 0:
                add = table.identifier_term_ids if name in _IDENTIFIER_FIELDS else table.text_term_ids
                for text in _field_texts(e, name):
                    n += add(text, ids[f])
            per_doc[f].append(n)
    n_terms = max(len(table.vocabulary), 1)
    doc_numbers = np.arange(len(chunk), dtype=np.int64)
    keys_parts: list[np.ndarray] = []
    value_parts: list[np.ndarray] = []
    for f, (_, w) in enumerate(weights):
        if not len(ids[f]):
            continue
        docs = np.repeat(doc_numbers, _np(per_doc[f], np.int32))
        term_ids = _np(ids[f], np.int32)
        unique, counts = np.unique(docs * n_terms + term_ids, return_counts=True)
        keys_parts.append(unique)
        value_parts.append(w * counts.astype(np.float64))
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
    return (unique % n_terms).astype(np.int32), (unique // n_terms).astype(np.int32), summed
