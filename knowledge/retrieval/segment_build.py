"""A catalog's segment written straight from its entries, batch by batch, without an index in memory.

``segments.segment_write`` stores an index built in memory (``RouterIndex``):
at 100,000 entries that index peaks at ~540 MB above the catalog, most of it
the postings (placed whole in anonymous memory before they are written) and the
per-entry Python tables. ``segment_build`` writes the same ``arrays.bin``, byte
for byte, reading the entries once, a batch at a time (an iterator will do:
the catalog need not be in memory):

1. *Runs.* Each batch's (term, document, weighted frequency) triplets
   (``postings.batch_triplets``, the sums ``weighted_parts`` makes, made in
   term order: ``by_term``) are appended to a temporary file as one run; the batch's
   document lengths, body word counts and per-entry tables
   (``table_build.TableBuilder``) are kept, the triplets are not. A batch's
   triplets are summed and written (numpy, ``field_pairs``) on a second thread
   while the next batch is analyzed (Python, ``batch_field_terms``).
2. *Statistics.* Once every batch is read, the document frequencies (summed
   over the runs), the postings' offsets, IDF, the average length and each
   document's length norm are known: the layout of ``arrays.bin`` is fixed.
3. *Merge by term window.* The postings are written in windows of consecutive
   terms (about ``WINDOW_POSTINGS`` postings each): every run's slice of those
   terms is read back, the slices are concatenated in run order and ordered by
   term, stably, which is the order ``SparseBM25Index.from_parts`` places them
   in (a term's postings by document, runs being in document order). The
   window's BM25 weights and each term's best weight are computed there with
   the same expressions, and ``indices``, ``data`` and ``tf`` are written at
   their offsets (``os.pwrite``: the file's pages stay in the page cache, not
   in the process).

What stays in memory is the vocabulary and the analyzer's chunk table (what
any build needs to give terms their ids), the per-entry tables as arrays, one
batch and one window: the runs are on disk, ~12 bytes a posting. A test
compares the bytes with ``segment_write`` of an in-memory index on several
catalogs, batch sizes and field weights.
"""

from __future__ import annotations

import itertools
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from .entries import EntryLike, RouterConfig
from .fusion import estimate_tokens, estimate_tokens_many
from .index import full_collections_paused, release_free_heap
from . import postings
from .postings import FIELDS, batch_field_terms, field_pairs, TermTable
from .segments import (
    SegmentError,
    array_layout,
    array_pwrite,
    data_file_create,
    segment_exists,
    segment_meta,
    segment_path,
    segment_publish,
    segment_temp,
    table_arrays,
)
from .sorting import stable_order
from .table_build import TableBuilder
from .tables import StrTable

# Postings per merge window: bounds the merge's transient arrays (~40 bytes a posting, ~40 MB).
WINDOW_POSTINGS = 1 << 20
_RUNS = "runs.tmp"


class _Run:
    """One batch's triplets on disk, ordered by term: ``terms`` (int32), ``docs`` (int32), ``values``."""

    __slots__ = ("offset", "count", "dtype", "term_ids", "term_starts")

    def __init__(self, offset: int, count: int, dtype: np.dtype, term_ids: np.ndarray, term_starts: np.ndarray):
        self.offset, self.count, self.dtype = offset, count, dtype
        # Each distinct term of the run and where its postings start: a window's slice is two searches.
        self.term_ids, self.term_starts = term_ids, term_starts

    def at(self, term: int) -> int:
        """Position of the first posting of a term ≥ ``term``."""
        found = int(np.searchsorted(self.term_ids, term))
        return int(self.term_starts[found]) if found < len(self.term_ids) else self.count

    def read(self, fd: int, start: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = end - start
        base = self.offset
        terms = _pread(fd, base + 4 * start, n, np.int32)
        docs = _pread(fd, base + 4 * self.count + 4 * start, n, np.int32)
        values = _pread(fd, base + 8 * self.count + self.dtype.itemsize * start, n, self.dtype)
        return terms, docs, values


def _pread(fd: int, offset: int, count: int, dtype: np.dtype) -> np.ndarray:
    out = np.empty(count, dtype=dtype)
    view = memoryview(out.view(np.uint8))
    while view:
        got = os.preadv(fd, [view], offset)
        if got <= 0:
            raise OSError(f"short read at {offset} of the build's runs")
        view, offset = view[got:], offset + got
    return out


def _batches(entries: Iterable[EntryLike], size: int) -> Iterable[list[EntryLike]]:
    it = iter(entries)
    while batch := list(itertools.islice(it, size)):
        yield batch


def segment_build(
    directory: Path,
    key: str,
    entries: Iterable[EntryLike],
    config: RouterConfig | None = None,
    *,
    info: dict | None = None,
    batch_size: int | None = None,
    window_postings: int = WINDOW_POSTINGS,
    before_publish: Callable[[], None] | None = None,
) -> Path:
    """Write segment ``key`` for ``entries`` (any iterable, read once, in order) under ``config``; returns its
    path. The bytes are ``segment_write``'s for ``RouterIndex(entries, config=config)`` and its
    ``shared_tables()``; an existing segment is kept. Full garbage collections wait, as for a build.

    ``before_publish()`` runs once the segment is complete, before it is renamed into place: raising there
    (the entries read were not the ones the key names, say) leaves no segment and no temporary files."""
    if segment_exists(directory, key):
        return segment_path(directory, key)
    tmp = segment_temp(directory, key)
    try:
        with full_collections_paused():
            size = batch_size or postings.CHUNK_ENTRIES  # the in-memory build's batches: term ids follow them
            meta = _build(tmp, key, entries, config or RouterConfig(), info, size, window_postings)
        if before_publish is not None:
            before_publish()
        segment_publish(directory, key, tmp, meta)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        release_free_heap()  # the batches' and windows' freed pages: the process goes on serving
    return segment_path(directory, key)


class _RunWriter:
    """Places the batches' pairs as runs in the runs file, in order, and keeps what the statistics need.

    ``place`` is numpy and file writes only (it reads neither the entries nor the term table): the build
    runs it on a second thread while the next batch is analyzed (the GIL is released in the sorts,
    copies and ``os.pwrite``), one batch at a time."""

    def __init__(self, fd: int):
        self.fd = fd
        self.written = 0
        self.runs: list[_Run] = []
        self.lengths: list[np.ndarray] = []
        self.doc_freq = np.zeros(0, dtype=np.int64)
        self.narrow = True  # every run's frequencies float32 (exact): the stored ``tf`` is float32

    def place(self, field_terms: list, n_batch: int, n_terms: int, start: int) -> None:
        terms, docs, values = field_pairs(field_terms, n_batch, n_terms, by_term=True)
        del field_terms
        lengths = np.zeros(n_batch, dtype=np.float64)
        if values.size:
            lengths += np.bincount(docs, weights=values, minlength=n_batch)
            docs += start
            self.narrow = self.narrow and values.dtype == np.float32
            counts = np.bincount(terms, minlength=n_terms)
            if len(counts) > len(self.doc_freq):
                grown = np.zeros(len(counts) - len(self.doc_freq), np.int64)
                self.doc_freq = np.concatenate([self.doc_freq, grown])
            self.doc_freq += counts
            firsts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
            self.runs.append(_Run(self.written, terms.size, values.dtype, terms[firsts], firsts))
            for part in (terms, docs, values):
                array_pwrite(self.fd, self.written, part)
                self.written += part.nbytes
        self.lengths.append(lengths)


def _build(tmp: Path, key, entries, config: RouterConfig, info, batch_size: int, window_postings: int) -> dict:
    weights = [(name, float(config.field_weights.get(name, 1.0))) for name in FIELDS]
    body_read = dict(weights)["body"] != 0
    table = TermTable()
    tables = TableBuilder()
    body_parts: list[np.ndarray] = []
    n_docs = 0
    runs_path = tmp / _RUNS
    # Two stages a batch: its analysis (Python: the tokenizer's new chunks, the identifiers, the per-entry
    # tables) here, its placing (numpy: ``_RunWriter.place``) on a second thread while the next batch is
    # analyzed; one placing waits at a time, so the runs are written in batch order.
    with open(runs_path, "w+b") as runs_file, ThreadPoolExecutor(1, thread_name_prefix="segment-place") as pool:
        writer = _RunWriter(runs_file.fileno())
        placing = None
        for batch in _batches(entries, batch_size):
            start = n_docs
            n_docs += len(batch)
            words = np.full(len(batch), -1, dtype=np.int64)
            field_terms, n_batch, n_terms = batch_field_terms(table, batch, weights, words)
            if placing is not None:
                placing.result()  # the previous batch's run written (or its error raised here)
            placing = pool.submit(writer.place, field_terms, n_batch, n_terms, start)
            del field_terms
            if body_read:
                chars = np.fromiter((len(e.body or "") for e in batch), dtype=np.int64, count=len(batch))
                body_parts.append(estimate_tokens_many(chars, words).astype(np.int32))
            else:  # the bodies were not read: counted as a route would count them
                body_parts.append(np.array([estimate_tokens(e.body) for e in batch], dtype=np.int32))
            tables.add(batch, start)
            del words, batch
        if placing is not None:
            placing.result()
        vocabulary = table.vocabulary
        del table  # the analyzer's chunk table: the merge needs only the term ids
        release_free_heap()
        n_terms = len(vocabulary)
        doc_freq = np.concatenate([writer.doc_freq, np.zeros(n_terms - len(writer.doc_freq), np.int64)])
        lengths = np.concatenate(writer.lengths) if writer.lengths else np.zeros(0)
        body_tokens = np.concatenate(body_parts) if body_parts else np.zeros(0, dtype=np.int32)
        del body_parts
        writer.lengths = []
        return _write(
            tmp,
            key,
            writer.runs,
            runs_file.fileno(),
            vocabulary,
            doc_freq,
            lengths,
            body_tokens,
            tables,
            writer.narrow,
            config,
            info,
            window_postings,
        )


def _write(
    tmp: Path,
    key,
    runs,
    runs_fd,
    vocabulary,
    doc_freq,
    lengths,
    body_tokens,
    tables: TableBuilder,
    narrow: bool,
    config: RouterConfig,
    info,
    window_postings: int,
) -> dict:
    """Statistics, layout, the merged postings and the other arrays into ``arrays.bin``; returns the meta."""
    n_docs, n_terms = len(lengths), len(doc_freq)
    k1, b = config.k1, config.b
    # As ``SparseBM25Index._from_parts`` computes them (same expressions, same arrays: same bits).
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(doc_freq, out=indptr[1:])
    total = int(indptr[-1])
    idf = np.log((n_docs + 1) / np.maximum(doc_freq, 1)) if n_terms else np.zeros(0)
    avgdl = float(lengths.sum()) / n_docs if n_docs else 0.0
    norm = k1 * (1 - b + b * lengths / avgdl) if avgdl > 0 else np.full(n_docs, k1)
    tf_dtype = np.dtype(np.float32 if narrow else np.float64)
    vocab = StrTable.build(list(vocabulary))  # ids are in insertion order
    stored, kinds = table_arrays(tables.finish(vocabulary, doc_freq, body_tokens))
    del tables
    arrays = {
        "bm25/indptr": indptr,
        "bm25/indices": None,
        "bm25/data": None,
        "bm25/idf": idf,
        "bm25/doc_freq": doc_freq,
        "bm25/term_max": None,
        "bm25/lengths": lengths,
        "bm25/tf": None,
        **{f"vocab/{part}": values for part, values in vocab.arrays.items()},
        **stored,
    }
    merged = {
        "bm25/indices": (np.dtype(np.int32), (total,)),
        "bm25/data": (np.dtype(np.float64), (total,)),
        "bm25/term_max": (np.dtype(np.float64), (n_terms,)),
        "bm25/tf": (tf_dtype, (total,)),
    }
    layout, size = array_layout(
        (name, *merged[name]) if values is None else (name, np.ascontiguousarray(values).dtype, np.shape(values))
        for name, values in arrays.items()
    )
    with data_file_create(tmp, size) as fh:
        fd = fh.fileno()
        for name, values in arrays.items():
            if values is not None:
                array_pwrite(fd, layout[name]["offset"], values)
        del arrays, stored, vocab
        term_max = np.zeros(n_terms)
        offsets = {name: layout[name]["offset"] for name in ("bm25/indices", "bm25/data", "bm25/tf")}
        for t0, t1 in _windows(indptr, window_postings):
            p0, p1 = int(indptr[t0]), int(indptr[t1])
            parts = [run.read(runs_fd, run.at(t0), run.at(t1)) for run in runs]
            terms = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
            docs = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int32)
            values = np.concatenate([p[2].astype(np.float64) for p in parts]) if parts else np.zeros(0)
            del parts
            if terms.size != p1 - p0:  # a run file that lost bytes: refused like any unreadable segment
                raise SegmentError(f"segment {key}: window {t0}-{t1} read {terms.size} postings of {p1 - p0}")
            order = stable_order(terms - t0)
            terms, docs, values = terms[order], docs[order], values[order]
            del order
            data = values.copy()
            data *= idf[terms] * (k1 + 1) / (data + norm[docs])
            nonempty = np.flatnonzero(doc_freq[t0:t1] > 0) + t0
            if data.size:
                term_max[nonempty] = np.maximum.reduceat(data, indptr[nonempty] - p0)
            array_pwrite(fd, offsets["bm25/indices"] + 4 * p0, docs)
            array_pwrite(fd, offsets["bm25/data"] + 8 * p0, data)
            array_pwrite(fd, offsets["bm25/tf"] + tf_dtype.itemsize * p0, values.astype(tf_dtype))
            del terms, docs, values, data
        array_pwrite(fd, layout["bm25/term_max"]["offset"], term_max)
    os.unlink(tmp / _RUNS)
    return segment_meta(
        key,
        n_docs=n_docs,
        n_terms=n_terms,
        k1=k1,
        b=b,
        delta=config.delta,
        avgdl=avgdl,
        kinds=kinds,
        layout=layout,
        size=size,
        info=info,
    )


def _windows(indptr: np.ndarray, window_postings: int) -> Iterable[tuple[int, int]]:
    """Consecutive term ranges ``[t0, t1)`` covering every term, each of about ``window_postings`` postings
    (one term with more postings than that is a window of its own)."""
    n_terms = len(indptr) - 1
    t0 = 0
    while t0 < n_terms:
        t1 = int(np.searchsorted(indptr, indptr[t0] + window_postings, side="right")) - 1
        t1 = min(max(t1, t0 + 1), n_terms)
        yield t0, t1
        t0 = t1
