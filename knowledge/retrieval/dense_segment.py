"""The dense signal's entry vectors on disk, memory-mapped by every process.

A catalog's vectors are stored per revision in the database (``knowledge.embeddings``); each
process used to copy them twice, once as the catalog's bytes and once as the ``DenseIndex``
matrix (~3.6 KB per entry each: 717 MB at 100,000 entries). Like the BM25 segment
(``segments``), they are now written once, into a file named by their content, and every process
maps it::

    <dir>/vectors/<key>/matrix.npy   (entries × DIM) float32, catalog order; zero rows lack a vector
    <dir>/vectors/<key>/present.npy  which rows hold a vector (bool)
    <dir>/vectors/<key>/meta.json    format, model id, rows, dimension

The key is a digest of the model id and, in catalog order, each entry's package ID and vector:
two processes holding the same catalog find the same file, and a vector that changes (a re-embed,
a model upgrade) names a new one. Written into a temporary directory and renamed (a reader sees
all of it or nothing), under the key's lock (the first process writes, the others wait and map
it); old keys are collected like old segments, in their own directory so that neither kind of
segment pushes the other out.

Pure module: no Django (the directory is passed in).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from .dense import DenseIndex
from .segments import segment_exists, segment_lock, segment_path, segment_publish, segment_temp, segments_collect

FORMAT = 1
SUBDIR = "vectors"
_META = "meta.json"


class DenseSegmentError(Exception):
    """A vectors segment is missing, incomplete or not the one its key names."""


def vectors_directory(directory: Path) -> Path:
    return Path(directory) / SUBDIR


def vectors_key(model_id: str, dim: int, package_ids: Sequence[str], vectors: Mapping[str, object]) -> str:
    """The digest naming a catalog's vectors: the model, and each entry's ID and vector bytes in order."""
    return _key(model_id, dim, len(package_ids), ((pid, vectors.get(pid)) for pid in package_ids))


def _key(model_id: str, dim: int, rows: int, held: Iterable[tuple[str, object]]) -> str:
    """``vectors_key`` over (package ID, its vector's bytes or None) in catalog order."""
    digest = hashlib.sha1(f"dense-f{FORMAT}\x00{model_id}\x00{dim}\x00{rows}".encode())
    for pid, vector in held:
        if vector is not None and len(vector) == dim * 4:
            digest.update(b"\x01" + pid.encode() + b"\x00")
            digest.update(vector)
        else:
            digest.update(b"\x02" + pid.encode() + b"\x00")
    return f"v{digest.hexdigest()[:24]}"


def dense_segment_load(directory: Path, key: str, *, model_id: str, dim: int, rows: int, **kwargs) -> DenseIndex:
    """The vectors segment ``key`` as a DenseIndex over a read-only mapping of its matrix."""
    path = segment_path(vectors_directory(directory), key)
    try:
        meta = json.loads((path / _META).read_text(encoding="utf-8"))
        if (meta.get("format"), meta.get("model_id"), meta.get("dim"), meta.get("rows")) != (
            FORMAT,
            model_id,
            dim,
            rows,
        ):
            raise DenseSegmentError(f"vectors {key}: written for another model, size or format")
        mapped = np.load(path / "matrix.npy", mmap_mode="r", allow_pickle=False)
        present = np.load(path / "present.npy", allow_pickle=False)
        if mapped.dtype != np.float32 or mapped.shape != (rows, dim) or present.shape != (rows,):
            raise DenseSegmentError(f"vectors {key}: arrays of another shape")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DenseSegmentError(f"vectors {key}: {exc.__class__.__name__}") from exc
    with contextlib.suppress(OSError):
        os.utime(path)  # "recently used" for segments_collect
    # A plain ndarray over the mapping (``segments._Mapped.array`` says why): ``is_mapped`` still sees it.
    return DenseIndex(np.asarray(mapped), present.astype(bool), model_id=model_id, **kwargs)


def dense_segment_write(
    directory: Path,
    key: str,
    package_ids: Sequence[str],
    vectors: Mapping[str, object],
    *,
    model_id: str,
    dim: int,
) -> None:
    """Write the vectors of ``package_ids`` (catalog order) as segment ``key``; an existing one is kept.

    The matrix is written through a mapping of the new file, row by row: the writer holds no second
    copy of the vectors in its own memory."""
    vectors_dir = vectors_directory(directory)
    if segment_exists(vectors_dir, key):
        return
    tmp = segment_temp(vectors_dir, key)
    try:
        present = np.zeros(len(package_ids), dtype=bool)
        out = np.lib.format.open_memmap(tmp / "matrix.npy", mode="w+", dtype="<f4", shape=(len(package_ids), dim))
        for i, pid in enumerate(package_ids):
            held = vectors.get(pid)
            if held is not None and len(held) == dim * 4:
                out[i] = np.frombuffer(held, dtype="<f4")
                present[i] = True
        out.flush()
        del out
        np.save(tmp / "present.npy", present, allow_pickle=False)
        segment_publish(
            vectors_dir, key, tmp, {"format": FORMAT, "model_id": model_id, "dim": dim, "rows": len(package_ids)}
        )
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def dense_segment(
    directory: Path,
    package_ids: Sequence[str],
    vectors: Mapping[str, object],
    *,
    model_id: str,
    dim: int,
    keep: int = 2,
    **kwargs,
) -> DenseIndex:
    """The mapped DenseIndex of these vectors: read if written, else written first (one writer per key).

    Raises ``DenseSegmentError`` or ``OSError`` when the directory cannot be used (the caller then
    builds the matrix in memory)."""
    key = vectors_key(model_id, dim, package_ids, vectors)
    vectors_dir = vectors_directory(directory)
    spec = {"model_id": model_id, "dim": dim, "rows": len(package_ids), **kwargs}
    if segment_exists(vectors_dir, key):
        with contextlib.suppress(DenseSegmentError):
            return dense_segment_load(directory, key, **spec)
    with segment_lock(vectors_dir, key):
        if segment_exists(vectors_dir, key):
            try:
                return dense_segment_load(directory, key, **spec)
            except DenseSegmentError:  # truncated or foreign: written anew
                shutil.rmtree(segment_path(vectors_dir, key), ignore_errors=True)
        dense_segment_write(directory, key, package_ids, vectors, model_id=model_id, dim=dim)
        segments_collect(vectors_dir, keep=keep, protect=(key,))
    return dense_segment_load(directory, key, **spec)


def dense_segment_prepare(
    directory: Path,
    package_ids: Sequence[str],
    rows: Iterable[tuple[str, object]],
    *,
    model_id: str,
    dim: int,
    keep: int = 2,
) -> tuple[str | None, bool, int]:
    """Write the vectors segment of ``package_ids`` (catalog order) from ``rows``, (package ID, vector
    bytes) pairs in any order, read once and never held (a query's rows, for a Celery task); returns
    (key, whether it was written, how many entries have a vector). Without any vector nothing is
    written and the key is None: a process holding no vector has no dense index. Pairs of other
    packages, and vectors of another size, are skipped, as ``vectors_key`` skips them: the key is the
    one a process holding these vectors computes, so it maps this file instead of writing its own.

    The key is only known once every vector is read: the matrix is written into a temporary
    directory, its key computed from the file, and it is published under that key, or dropped
    when a process wrote that key first."""
    vectors_dir = vectors_directory(directory)
    slot = {pid: i for i, pid in enumerate(package_ids)}
    n, width = len(package_ids), dim * 4
    tmp = segment_temp(vectors_dir, "prepare")
    try:
        present = np.zeros(n, dtype=bool)
        # Rows go to the file with ``pwrite``, not through a mapping: the pages stay in the page cache,
        # not in this process's memory (a Celery worker's, which maps nothing afterwards).
        with open(tmp / "matrix.npy", "w+b") as fh:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": np.lib.format.dtype_to_descr(np.dtype("<f4")), "fortran_order": False, "shape": (n, dim)}
            )
            header = fh.tell()
            fh.truncate(header + n * width)
            fd = fh.fileno()
            for pid, vector in rows:
                i = slot.get(pid)
                if i is not None and vector is not None and len(vector) == width:
                    os.pwrite(fd, vector, header + i * width)
                    present[i] = True
            count = int(present.sum())
            if not count:
                return None, False, 0
            key = _key(model_id, dim, n, _read_back(fd, header, package_ids, present, width))
        if segment_exists(vectors_dir, key):
            return key, False, count
        np.save(tmp / "present.npy", present, allow_pickle=False)
        segment_publish(vectors_dir, key, tmp, {"format": FORMAT, "model_id": model_id, "dim": dim, "rows": n})
        segments_collect(vectors_dir, keep=keep, protect=(key,))
        return key, True, count
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _read_back(fd: int, header: int, package_ids: Sequence[str], present: np.ndarray, width: int, block: int = 4096):
    """(package ID, its row's bytes or None) in catalog order, read back from the file a block at a time."""
    for lo in range(0, len(package_ids), block):
        hi = min(lo + block, len(package_ids))
        data = memoryview(os.pread(fd, (hi - lo) * width, header + lo * width))
        if len(data) != (hi - lo) * width:
            raise OSError(f"short read of the vectors being prepared at row {lo}")
        for i in range(lo, hi):
            yield package_ids[i], data[(i - lo) * width : (i - lo + 1) * width] if present[i] else None


def mapped_file(dense: DenseIndex) -> str | None:
    """The file ``dense``'s matrix maps (None for a matrix in this process's memory)."""
    array = dense.matrix
    while array is not None:
        if isinstance(array, np.memmap):
            return str(array.filename)
        array = getattr(array, "base", None)
    return None
