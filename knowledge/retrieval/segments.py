"""The BM25 part of a router index on disk, memory-mapped by every process.

One directory per segment key (catalog content digest + router settings
fingerprint + this module's ``FORMAT``, ``index_store.segment_key``) under the
index directory, holding two files::

    <dir>/<key>/meta.json    format, N, k1, b, δ, avgdl, vocabulary size, the tables stored,
                             and where each array lies in arrays.bin (dtype, shape, byte offset)
    <dir>/<key>/arrays.bin   every array, one after the other, each at a 64-byte aligned offset:
                             bm25/<name>     indptr, indices, data, idf, doc_freq, term_max, lengths, tf
                             vocab/<part>    the vocabulary (``tables.StrTable``: term → term id)
                             tables/<table>[/<part>]  the router's per-entry tables
                                             (``index_tables.export_tables``)

``arrays.bin`` is mapped once (``np.memmap``, read-only) and every array is a
view into that one mapping: the postings, the vocabulary and the per-entry
tables (positions, ID keys, semantic IDs, keywords, links, the typo table)
live once in the page cache and every web and worker process maps the same
pages, so an extra process builds no Python table per entry. One mapping per
segment and process (format 2 kept ~60 ``.npy`` files, each mapped on its own).

A segment is written into a temporary directory and renamed into place, so a
reader sees a complete segment or none. Writers serialise on an ``fcntl`` lock
file per key (``<dir>/<key>.lock``): the first process builds, the others wait
for it (or keep serving their previous index). Files are never modified after
the rename; ``segments_collect`` removes old segments, which is safe for a
process that still maps one (an unlinked file stays readable while mapped).

No Django here: the directory is passed in (``KNOWLEDGE_INDEX_DIR`` in settings).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from .bm25 import SparseBM25Index, _Postings
from .tables import Ragged, StrTable

# 2: vocabulary as a StrTable (was terms.txt) and the router's per-entry tables.
# 3: every array in one file (arrays.bin) behind an offset table in meta.json (were ~60 .npy files).
# 4: the per-entry tables include each body's token estimate (``body_tokens``); same file layout.
# 5: string tables hash their keys with XXH3 (was BLAKE2b); same file layout.
# 6: the analyzer's stop words take chat shorthand (common/text/stopwords.py, CHAT): a body holding one
#    of them analyzes to other terms, so a segment written before is built again; same file layout.
FORMAT = 6
ARRAYS = ("indptr", "indices", "data", "idf", "doc_freq", "term_max", "lengths", "tf")
_META = "meta.json"
_DATA = "arrays.bin"
# The data file's first bytes (then zeros up to the first array): a foreign or older file is refused.
_MAGIC = b"CTXSEG03"
# Each array starts at a multiple of this (a cache line; the mapping itself starts on a page).
_ALIGN = 64
_KINDS = {"str": StrTable, "ragged": Ragged}


class SegmentError(Exception):
    """A segment directory is missing, incomplete or of another format."""


def segment_path(directory: Path, key: str) -> Path:
    return Path(directory) / key


def segment_exists(directory: Path, key: str) -> bool:
    return (segment_path(directory, key) / _META).is_file()


def array_layout(specs: Iterable[tuple[str, np.dtype, tuple[int, ...]]]) -> tuple[dict[str, dict], int]:
    """Where each array ``(name, dtype, shape)`` lies in ``arrays.bin``, one after the other in order, each at
    an ``_ALIGN``-aligned offset after the magic; returns that layout and the file's size."""
    layout = {}
    offset = _ALIGN
    for name, dtype, shape in specs:
        dtype = np.dtype(dtype)
        if dtype.hasobject:
            raise ValueError(f"array {name}: {dtype} cannot be mapped")
        layout[name] = {"dtype": dtype.str, "shape": list(shape), "offset": offset}
        offset += math.prod(shape) * dtype.itemsize
        offset += -offset % _ALIGN
    return layout, offset


def data_file_create(tmp: Path, size: int):
    """``arrays.bin`` in the segment being written (``segment_temp``), of ``size`` bytes, zeros after the
    magic (the padding between arrays stays zero), open for ``os.pwrite`` of each array at its offset
    (``array_layout``)."""
    fh = open(tmp / _DATA, "w+b")
    fh.write(_MAGIC)
    fh.truncate(size)
    return fh


def array_pwrite(fd: int, offset: int, values: np.ndarray) -> None:
    """Write ``values``' bytes at ``offset`` of the open file ``fd``."""
    view = memoryview(np.ascontiguousarray(values).reshape(-1).view(np.uint8))
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _arrays_write(tmp: Path, arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, dict], int]:
    """Write ``arrays`` one after the other into ``tmp``'s ``arrays.bin``; returns their layout and its size."""
    arrays = {name: np.ascontiguousarray(values) for name, values in arrays.items()}
    layout, size = array_layout((name, values.dtype, values.shape) for name, values in arrays.items())
    with data_file_create(tmp, size) as fh:
        for name, values in arrays.items():
            array_pwrite(fh.fileno(), layout[name]["offset"], values)
    return layout, size


def table_arrays(tables: Mapping[str, object]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The router's per-entry tables as the arrays stored (``tables/<name>[/<part>]``) and each table's kind."""
    arrays: dict[str, np.ndarray] = {}
    kinds = {}
    for name, table in tables.items():
        if isinstance(table, np.ndarray):
            arrays[f"tables/{name}"] = table
            kinds[name] = "array"
        else:
            for part, values in table.arrays.items():
                arrays[f"tables/{name}/{part}"] = values
            kinds[name] = "str" if isinstance(table, StrTable) else "ragged"
    return arrays, kinds


def segment_meta(
    key: str,
    *,
    n_docs: int,
    n_terms: int,
    k1: float,
    b: float,
    delta: float,
    avgdl: float,
    kinds: dict,
    layout: dict,
    size: int,
    info: dict | None,
) -> dict:
    """``meta.json``'s content."""
    return {
        "format": FORMAT,
        "key": key,
        "n_docs": n_docs,
        "n_terms": n_terms,
        "k1": k1,
        "b": b,
        "delta": delta,
        "avgdl": avgdl,
        "tables": kinds,
        "arrays": layout,
        "bytes": size,
        "written_at": time.time(),
        **(info or {}),
    }


def segment_temp(directory: Path, key: str) -> Path:
    """A new temporary directory beside the segment ``key``, to write it in (``segment_publish``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    return tmp


def segment_publish(directory: Path, key: str, tmp: Path, meta: dict) -> None:
    """Write ``meta.json`` into ``tmp`` and rename it into place; a concurrent writer's segment wins."""
    (tmp / _META).write_text(json.dumps(meta), encoding="utf-8")
    try:
        os.rename(tmp, segment_path(directory, key))
    except OSError:
        if not segment_exists(directory, key):  # not a concurrent writer's win: a real failure
            raise


def segment_write(
    directory: Path, key: str, bm25: SparseBM25Index, *, info: dict | None = None, tables: dict | None = None
) -> Path:
    """Write ``bm25`` (and the router's ``tables``, ``index_tables.export_tables``) as segment ``key``
    (atomically); returns its path. An existing segment is kept. (``segment_build`` writes the same
    bytes from the entries, without an index in memory.)"""
    final = segment_path(directory, key)
    if segment_exists(directory, key):
        return final
    tmp = segment_temp(directory, key)
    try:
        p = bm25._postings
        arrays = {
            "bm25/indptr": p.indptr,
            "bm25/indices": p.indices,
            "bm25/data": p.data,
            "bm25/idf": bm25.idf_values,
            "bm25/doc_freq": bm25.doc_freq,
            "bm25/term_max": bm25.term_max,
            "bm25/lengths": bm25.lengths,
            "bm25/tf": bm25.tf,
        }
        terms = sorted(bm25.vocabulary, key=bm25.vocabulary.__getitem__)
        for part, values in StrTable.build(terms).arrays.items():
            arrays[f"vocab/{part}"] = values
        stored, kinds = table_arrays(tables or {})
        arrays.update(stored)
        layout, size = _arrays_write(tmp, arrays)
        meta = segment_meta(
            key,
            n_docs=bm25.n_docs,
            n_terms=len(terms),
            k1=bm25.k1,
            b=bm25.b,
            delta=bm25.delta,
            avgdl=bm25.avgdl,
            kinds=kinds,
            layout=layout,
            size=size,
            info=info,
        )
        segment_publish(directory, key, tmp, meta)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _meta(path: Path, key: str) -> dict:
    meta = json.loads((path / _META).read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise SegmentError(f"segment {key}: format {meta.get('format')!r}, expected {FORMAT}")
    return meta


class _Mapped:
    """A segment's arrays: views into one read-only mapping of its data file."""

    def __init__(self, path: Path, key: str):
        self.key = key
        self.meta = _meta(path, key)
        self.data = np.memmap(path / _DATA, dtype=np.uint8, mode="r")
        if self.data.size != self.meta["bytes"] or bytes(self.data[: len(_MAGIC)]) != _MAGIC:
            raise SegmentError(f"segment {key}: {_DATA} is {self.data.size} bytes or not a segment's")
        self.layout = self.meta["arrays"]

    def array(self, name: str) -> np.ndarray:
        spec = self.layout[name]
        dtype, shape, start = np.dtype(spec["dtype"]), tuple(spec["shape"]), int(spec["offset"])
        end = start + math.prod(shape) * dtype.itemsize
        if dtype.hasobject or start < _ALIGN or end > self.data.size:
            raise SegmentError(f"segment {self.key}: array {name} lies outside {_DATA}")
        # A plain ndarray over the mapping, not an ``np.memmap``: slicing a memmap subclass runs
        # Python-level ``__array_finalize__`` on every slice the route takes (~40 µs a question at 1k).
        return np.asarray(self.data[start:end]).view(dtype).reshape(shape)

    def parts(self, prefix: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        """The arrays ``<prefix>/<name>`` stored (a table's parts; an optional one may be absent)."""
        return {name: self.array(f"{prefix}/{name}") for name in names if f"{prefix}/{name}" in self.layout}

    def bm25(self) -> SparseBM25Index:
        meta = self.meta
        arrays = {name: self.array(f"bm25/{name}") for name in ARRAYS}
        vocabulary = StrTable(**self.parts("vocab", StrTable.ARRAYS))
        if len(vocabulary) != meta["n_terms"]:
            raise SegmentError(f"segment {self.key}: {len(vocabulary)} terms, expected {meta['n_terms']}")
        index = SparseBM25Index(
            vocabulary=vocabulary,
            postings=_Postings(arrays["indptr"], arrays["indices"], arrays["data"]),
            idf=arrays["idf"],
            doc_freq=arrays["doc_freq"],
            n_docs=int(meta["n_docs"]),
            k1=float(meta["k1"]),
            b=float(meta["b"]),
            delta=float(meta["delta"]),
        )
        index.term_max = arrays["term_max"]
        index.lengths = arrays["lengths"]
        index.avgdl = float(meta["avgdl"])
        index.tf = arrays["tf"]
        index.segment_file = Path(self.data.filename)  # which file it maps (the arrays are plain views)
        return index

    def tables(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for name, kind in (self.meta.get("tables") or {}).items():
            if kind == "array":
                out[name] = self.array(f"tables/{name}")
            else:
                table = _KINDS[kind]
                out[name] = table(**self.parts(f"tables/{name}", table.ARRAYS))
        return out


def is_mapped(array: np.ndarray) -> bool:
    """Whether ``array`` is a view into a segment's mapping (not a copy in this process's memory)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
    return False


# What a damaged or foreign segment raises while it is read (a missing array or key, a bad dtype or shape).
_UNREADABLE = (OSError, ValueError, KeyError, TypeError)


def segment_load(directory: Path, key: str) -> tuple[SparseBM25Index, dict[str, object]]:
    """The segment's BM25 index (its vocabulary a ``StrTable``) and the router's per-entry tables
    ({} when it has none), all read-only views into one mapping of its data file.

    Raises ``SegmentError`` for a missing, truncated or foreign segment (the index store then rebuilds it).
    """
    path = segment_path(directory, key)
    try:
        mapped = _Mapped(path, key)
        loaded = mapped.bm25(), mapped.tables()
    except _UNREADABLE as exc:
        raise SegmentError(f"segment {key}: {exc.__class__.__name__}") from exc
    with contextlib.suppress(OSError):
        os.utime(path)  # "recently used" for segments_collect
    return loaded


@contextlib.contextmanager
def segment_lock(directory: Path, key: str, *, blocking: bool = True) -> Iterator[bool]:
    """Hold the build lock of ``key``; yields False (without waiting) when ``blocking`` is off and it is taken."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f"{key}.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def segments_collect(directory: Path, *, keep: int = 2, protect: tuple[str, ...] = ()) -> list[str]:
    """Remove all but the ``keep`` most recently used segments (and ``protect``); returns the keys removed.

    A segment being written (its lock held) is never touched: only complete
    directories are candidates, and stale temporaries older than an hour.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    complete = sorted(
        (p for p in directory.iterdir() if p.is_dir() and (p / _META).is_file()),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    removed = []
    for path in complete[keep:]:
        if path.name in protect:
            continue
        with segment_lock(directory, path.name, blocking=False) as held:
            if not held:
                continue
            # The lock file stays: unlinking it while another process waits on it would let that
            # process and a newcomer (who creates a fresh file) both "hold" the key's lock.
            shutil.rmtree(path, ignore_errors=True)
        removed.append(path.name)
    cutoff = time.time() - 3600
    for path in directory.glob(".tmp-*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
    for lock in directory.glob("*.lock"):  # an hour-old lock of a segment long gone: nobody waits on it
        with contextlib.suppress(OSError):
            if not (directory / lock.stem).exists() and lock.stat().st_mtime < cutoff:
                lock.unlink()
    return removed
