"""The BM25 part of a router index on disk, memory-mapped by every process.

One directory per segment key (catalog content digest + router settings
fingerprint + this module's ``FORMAT``, ``index_store.segment_key``) under the
index directory::

    <dir>/<key>/meta.json        format, N, k1, b, δ, avgdl, vocabulary size, the tables stored
    <dir>/<key>/vocab.*.npy      the vocabulary (``tables.StrTable``: term → term id)
    <dir>/<key>/<array>.npy      indptr, indices, data, idf, doc_freq, term_max, lengths, tf
    <dir>/<key>/<table>.*.npy    the router's per-entry tables (``index_tables.export_tables``)

Numpy arrays are opened with ``mmap_mode="r"``: the postings, the vocabulary
and the per-entry tables (positions, ID keys, semantic IDs, keywords, links,
the typo table) live once in the page cache and every web and worker process
maps the same pages, so an extra process builds no Python table per entry.

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
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .bm25 import SparseBM25Index, _Postings
from .tables import Ragged, StrTable

# 2: vocabulary as a StrTable (was terms.txt) and the router's per-entry tables.
FORMAT = 2
ARRAYS = ("indptr", "indices", "data", "idf", "doc_freq", "term_max", "lengths", "tf")
_META = "meta.json"
_VOCAB = "vocab"
_KINDS = {"str": StrTable, "ragged": Ragged}


class SegmentError(Exception):
    """A segment directory is missing, incomplete or of another format."""


def segment_path(directory: Path, key: str) -> Path:
    return Path(directory) / key


def segment_exists(directory: Path, key: str) -> bool:
    return (segment_path(directory, key) / _META).is_file()


def segment_write(
    directory: Path, key: str, bm25: SparseBM25Index, *, info: dict | None = None, tables: dict | None = None
) -> Path:
    """Write ``bm25`` (and the router's ``tables``, ``index_tables.export_tables``) as segment ``key``
    (atomically); returns its path. An existing segment is kept."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    final = segment_path(directory, key)
    if segment_exists(directory, key):
        return final
    tmp = directory / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        p = bm25._postings
        arrays = {
            "indptr": p.indptr,
            "indices": p.indices,
            "data": p.data,
            "idf": bm25.idf_values,
            "doc_freq": bm25.doc_freq,
            "term_max": bm25.term_max,
            "lengths": bm25.lengths,
            "tf": bm25.tf,
        }
        for name, values in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(values), allow_pickle=False)
        terms = sorted(bm25.vocabulary, key=bm25.vocabulary.__getitem__)
        StrTable.build(terms).save(tmp, _VOCAB)
        kinds = {}
        for name, table in (tables or {}).items():
            if isinstance(table, np.ndarray):
                np.save(tmp / f"{name}.npy", np.ascontiguousarray(table), allow_pickle=False)
                kinds[name] = "array"
            else:
                table.save(tmp, name)
                kinds[name] = "str" if isinstance(table, StrTable) else "ragged"
        meta = {
            "format": FORMAT,
            "key": key,
            "n_docs": bm25.n_docs,
            "n_terms": len(terms),
            "k1": bm25.k1,
            "b": bm25.b,
            "delta": bm25.delta,
            "avgdl": bm25.avgdl,
            "tables": kinds,
            "written_at": time.time(),
            **(info or {}),
        }
        (tmp / _META).write_text(json.dumps(meta), encoding="utf-8")
        try:
            os.rename(tmp, final)
        except OSError:
            if not segment_exists(directory, key):  # not a concurrent writer's win: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _meta(path: Path, key: str) -> dict:
    meta = json.loads((path / _META).read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise SegmentError(f"segment {key}: format {meta.get('format')!r}, expected {FORMAT}")
    return meta


def segment_open(directory: Path, key: str) -> SparseBM25Index:
    """The segment's BM25 index over memory-mapped arrays (read-only); its vocabulary is a ``StrTable``."""
    path = segment_path(directory, key)
    try:
        meta = _meta(path, key)
        arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in ARRAYS}
        vocabulary = StrTable.load(path, _VOCAB)
    except (OSError, ValueError) as exc:
        raise SegmentError(f"segment {key}: {exc.__class__.__name__}") from exc
    if len(vocabulary) != meta["n_terms"]:
        raise SegmentError(f"segment {key}: {len(vocabulary)} terms, expected {meta['n_terms']}")
    with contextlib.suppress(OSError):
        os.utime(path)  # "recently used" for segments_collect
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
    return index


def segment_tables(directory: Path, key: str) -> dict[str, object]:
    """The router's per-entry tables stored with segment ``key`` (memory-mapped); {} when it has none."""
    path = segment_path(directory, key)
    try:
        kinds = _meta(path, key).get("tables") or {}
        return {
            name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            if kind == "array"
            else _KINDS[kind].load(path, name)
            for name, kind in kinds.items()
        }
    except (OSError, ValueError, KeyError) as exc:
        raise SegmentError(f"segment {key}: {exc.__class__.__name__}") from exc


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
