"""The dense signal's entry vectors on disk, memory-mapped by every process.

A catalog's vectors are stored per revision in the database (``knowledge.embeddings``); each
process used to copy them twice, once as the catalog's bytes and once as the ``DenseIndex``
matrix (~3.6 KB per entry each: 717 MB at 100,000 entries). Like the BM25 segment
(``segments``), they are now written once, into a file named by their content, and every process
maps it::

    <dir>/vectors/<key>/matrix.npy          (entries × DIM) float32, catalog order; zero rows lack a vector
    <dir>/vectors/<key>/present.npy         which rows hold a vector (bool)
    <dir>/vectors/<key>/examples.f32        the example questions' vectors (raw float32, rows × DIM),
                                            grouped by entry; empty when no entry has any
    <dir>/vectors/<key>/example_slots.npy   each group's entry (its row in matrix.npy), int64
    <dir>/vectors/<key>/example_starts.npy  each group's first row in examples.f32 (increasing), int64
    <dir>/vectors/<key>/meta.json           format, model id, rows, dimension, example rows

The example questions' rows (``DenseIndex.set_example_rows``) are in the file since format 2: one
copy in the page cache for every process, as for the entry vectors (before, each process kept two
copies of its own: 64 KB per entry with nine questions, 644 MB at 10,000 such entries).

The key is a digest of the model id and, in catalog order, each entry's package ID, vector and
example rows: two processes holding the same catalog find the same file, and a vector that changes
(a re-embed, a model upgrade, accepted questions) names a new one. Written into a temporary
directory and renamed (a reader sees all of it or nothing), under the key's lock (the first process
writes, the others wait and map it); old keys are collected like old segments, in their own
directory so that neither kind of segment pushes the other out.

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

FORMAT = 2
SUBDIR = "vectors"
_META = "meta.json"
_EXAMPLES = "examples.f32"


class DenseSegmentError(Exception):
    """A vectors segment is missing, incomplete or not the one its key names."""


def vectors_directory(directory: Path) -> Path:
    return Path(directory) / SUBDIR


def vectors_key(
    model_id: str,
    dim: int,
    package_ids: Sequence[str],
    vectors: Mapping[str, object],
    examples: Mapping[str, object] | None = None,
) -> str:
    """The digest naming a catalog's vectors: the model, and each entry's ID, vector bytes and example
    rows' bytes (``examples``, package ID → float32 bytes) in order."""
    examples = examples or {}
    return _key(model_id, dim, len(package_ids), ((pid, vectors.get(pid), examples.get(pid)) for pid in package_ids))


def _fits(vector, dim: int) -> bool:
    return vector is not None and len(vector) == dim * 4


def _examples_fit(rows, dim: int) -> bool:
    return rows is not None and len(rows) > 0 and len(rows) % (dim * 4) == 0


def _key(model_id: str, dim: int, rows: int, held: Iterable[tuple[str, object, object]]) -> str:
    """``vectors_key`` over (package ID, its vector's bytes or None, its example rows' bytes or None)
    in catalog order. Example rows count only beside a vector of the model's size, as they are kept."""
    digest = hashlib.sha1(f"dense-f{FORMAT}\x00{model_id}\x00{dim}\x00{rows}".encode())
    for pid, vector, examples in held:
        if _fits(vector, dim):
            digest.update(b"\x01" + pid.encode() + b"\x00")
            digest.update(vector)
            if _examples_fit(examples, dim):
                digest.update(b"\x03" + str(len(examples)).encode() + b"\x00")
                digest.update(examples)
        else:
            digest.update(b"\x02" + pid.encode() + b"\x00")
    return f"v{digest.hexdigest()[:24]}"


def dense_segment_load(directory: Path, key: str, *, model_id: str, dim: int, rows: int, **kwargs) -> DenseIndex:
    """The vectors segment ``key`` as a DenseIndex over read-only mappings of its matrix and example rows."""
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
        examples = _examples_load(path, int(meta.get("example_rows", 0)), dim)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DenseSegmentError(f"vectors {key}: {exc.__class__.__name__}") from exc
    with contextlib.suppress(OSError):
        os.utime(path)  # "recently used" for segments_collect
    # A plain ndarray over the mapping (``segments._Mapped.array`` says why): ``is_mapped`` still sees it.
    dense = DenseIndex(np.asarray(mapped), present.astype(bool), model_id=model_id, **kwargs)
    if examples is not None:
        try:
            dense.set_example_rows(*examples)
        except ValueError as exc:
            raise DenseSegmentError(f"vectors {key}: example rows that do not fit") from exc
    return dense


def _examples_load(path: Path, count: int, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The segment's example rows (a read-only mapping), their slots and starts; None without any."""
    if count <= 0:
        return None
    data = path / _EXAMPLES
    if data.stat().st_size != count * dim * 4:
        raise ValueError("example rows of another size")
    rows = np.asarray(np.memmap(data, dtype="<f4", mode="r", shape=(count, dim)))
    slots = np.load(path / "example_slots.npy", allow_pickle=False)
    starts = np.load(path / "example_starts.npy", allow_pickle=False)
    return rows, slots, starts


def _examples_save(tmp: Path, slots: list[int], starts: list[int]) -> None:
    np.save(tmp / "example_slots.npy", np.asarray(slots, dtype=np.int64), allow_pickle=False)
    np.save(tmp / "example_starts.npy", np.asarray(starts, dtype=np.int64), allow_pickle=False)


def dense_segment_write(
    directory: Path,
    key: str,
    package_ids: Sequence[str],
    vectors: Mapping[str, object],
    *,
    model_id: str,
    dim: int,
    examples: Mapping[str, object] | None = None,
) -> None:
    """Write the vectors of ``package_ids`` (catalog order), and their example rows, as segment ``key``;
    an existing one is kept.

    The matrix is written through a mapping of the new file, row by row, and the example rows are
    appended to theirs: the writer holds no second copy of the vectors in its own memory."""
    vectors_dir = vectors_directory(directory)
    if segment_exists(vectors_dir, key):
        return
    examples = examples or {}
    tmp = segment_temp(vectors_dir, key)
    try:
        present = np.zeros(len(package_ids), dtype=bool)
        out = np.lib.format.open_memmap(tmp / "matrix.npy", mode="w+", dtype="<f4", shape=(len(package_ids), dim))
        slots, starts, at = [], [], 0
        with open(tmp / _EXAMPLES, "wb") as rows_out:
            for i, pid in enumerate(package_ids):
                held = vectors.get(pid)
                if _fits(held, dim):
                    out[i] = np.frombuffer(held, dtype="<f4")
                    present[i] = True
                    asked = examples.get(pid)
                    if _examples_fit(asked, dim):
                        rows_out.write(asked)
                        slots.append(i)
                        starts.append(at)
                        at += len(asked) // (dim * 4)
        out.flush()
        del out
        np.save(tmp / "present.npy", present, allow_pickle=False)
        _examples_save(tmp, slots, starts)
        segment_publish(
            vectors_dir,
            key,
            tmp,
            {"format": FORMAT, "model_id": model_id, "dim": dim, "rows": len(package_ids), "example_rows": at},
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
    examples: Mapping[str, object] | None = None,
    **kwargs,
) -> DenseIndex:
    """The mapped DenseIndex of these vectors, and of their example rows (``examples``, package ID →
    float32 bytes): read if written, else written first (one writer per key).

    Raises ``DenseSegmentError`` or ``OSError`` when the directory cannot be used (the caller then
    builds the matrix in memory)."""
    key = vectors_key(model_id, dim, package_ids, vectors, examples)
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
        dense_segment_write(directory, key, package_ids, vectors, model_id=model_id, dim=dim, examples=examples)
        segments_collect(vectors_dir, keep=keep, protect=(key,))
    return dense_segment_load(directory, key, **spec)


def dense_segment_prepare(
    directory: Path,
    package_ids: Sequence[str],
    rows: Iterable[tuple],
    *,
    model_id: str,
    dim: int,
    keep: int = 2,
) -> tuple[str | None, bool, int]:
    """Write the vectors segment of ``package_ids`` (catalog order) from ``rows``, (package ID, vector
    bytes, example rows' bytes) triples (or pairs, without example rows) in any order, read once and
    never held (a query's rows, for a Celery task); returns (key, whether it was written, how many
    entries have a vector). Without any vector nothing is written and the key is None: a process
    holding no vector has no dense index. Rows of other packages, vectors of another size, and a
    package's second row, are skipped, as ``vectors_key`` skips them: the key is the one a process
    holding these vectors computes, so it maps this file instead of writing its own.

    The key is only known once every vector is read: the matrix is written into a temporary
    directory, its key computed from the file, and it is published under that key, or dropped
    when a process wrote that key first. Example rows are appended to their file as they come
    (their groups in the order read: the slots need no order, the starts increase)."""
    vectors_dir = vectors_directory(directory)
    slot = {pid: i for i, pid in enumerate(package_ids)}
    n, width = len(package_ids), dim * 4
    tmp = segment_temp(vectors_dir, "prepare")
    try:
        present = np.zeros(n, dtype=bool)
        asked: dict[int, tuple[int, int]] = {}  # slot → (first example row, rows)
        at = 0
        # Rows go to the files with ``pwrite``/``write``, not through a mapping: the pages stay in the
        # page cache, not in this process's memory (a Celery worker's, which maps nothing afterwards).
        with open(tmp / "matrix.npy", "w+b") as fh, open(tmp / _EXAMPLES, "w+b") as ex:
            np.lib.format.write_array_header_1_0(
                fh, {"descr": np.lib.format.dtype_to_descr(np.dtype("<f4")), "fortran_order": False, "shape": (n, dim)}
            )
            header = fh.tell()
            fh.truncate(header + n * width)
            fd = fh.fileno()
            for pid, vector, *more in rows:
                i = slot.get(pid)
                if i is None or present[i] or not _fits(vector, dim):
                    continue
                os.pwrite(fd, vector, header + i * width)
                present[i] = True
                examples = more[0] if more else None
                if _examples_fit(examples, dim):
                    ex.write(examples)
                    asked[i] = (at, len(examples) // width)
                    at += asked[i][1]
            count = int(present.sum())
            if not count:
                return None, False, 0
            ex.flush()
            key = _key(model_id, dim, n, _read_back(fd, header, package_ids, present, width, ex.fileno(), asked))
        if segment_exists(vectors_dir, key):
            return key, False, count
        np.save(tmp / "present.npy", present, allow_pickle=False)
        _examples_save(tmp, list(asked), [start for start, _ in asked.values()])
        segment_publish(
            vectors_dir,
            key,
            tmp,
            {"format": FORMAT, "model_id": model_id, "dim": dim, "rows": n, "example_rows": at},
        )
        segments_collect(vectors_dir, keep=keep, protect=(key,))
        return key, True, count
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _read_back(
    fd: int,
    header: int,
    package_ids: Sequence[str],
    present: np.ndarray,
    width: int,
    examples_fd: int,
    asked: Mapping[int, tuple[int, int]],
    block: int = 4096,
):
    """(package ID, its row's bytes or None, its example rows' bytes or None) in catalog order, read back
    from the files a block of rows (and one entry's example rows) at a time."""
    for lo in range(0, len(package_ids), block):
        hi = min(lo + block, len(package_ids))
        data = memoryview(os.pread(fd, (hi - lo) * width, header + lo * width))
        if len(data) != (hi - lo) * width:
            raise OSError(f"short read of the vectors being prepared at row {lo}")
        for i in range(lo, hi):
            examples = None
            if i in asked:
                start, count = asked[i]
                examples = os.pread(examples_fd, count * width, start * width)
                if len(examples) != count * width:
                    raise OSError(f"short read of the example rows being prepared at entry {i}")
            yield package_ids[i], data[(i - lo) * width : (i - lo + 1) * width] if present[i] else None, examples


def mapped_file(dense: DenseIndex) -> str | None:
    """The file ``dense``'s matrix maps (None for a matrix in this process's memory)."""
    array = dense.matrix
    while array is not None:
        if isinstance(array, np.memmap):
            return str(array.filename)
        array = getattr(array, "base", None)
    return None
