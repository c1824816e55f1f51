"""Entry vectors per process: what the dense signal's vectors cost each web or worker process.

Synthetic catalogs (10k and 100k entries, random unit vectors of the router's dimension, 896)
in three layouts, each measured in a fresh process:

- ``copy``: what main did before the shared vectors: the catalog keeps one bytes object per
  vector and the dense index copies them into its own matrix (two copies per process);
- ``memory``: no index directory: the catalog's vectors arrive as views into one block (as
  ``knowledge.embeddings.catalog_vectors`` reads them), the dense index copies them into its
  matrix and the catalog then keeps views into that matrix (``Catalog.hold_vectors``): one copy;
- ``shared``: an index directory: a first process writes the vectors' file
  (``dense_segment``); the measured process (the second) maps it and keeps views into the
  mapping: its extra *anonymous* memory is what no other process can share.

With ``--example-questions N`` every entry also carries N example-question vectors (the worst case of
accepted example questions, ``DenseIndex.set_example_rows``), in the same three layouts: ``copy`` is
then what main did before they went into the shared file (the catalog's bytes, and the index's copy),
``memory`` the index's copy with the catalog holding views into it, ``shared`` the mapped file; the
warm ``top_k`` then mixes in the closest example question (share 0.3).

Then the Celery task's way of writing that file (``dense_segment_prepare``, from rows streamed in
no particular order): its time, and its memory above the start.

For each: the process's extra anonymous memory once it holds the vectors (MB), the time to get
its dense index (the digest of the vectors and the mapping, for ``shared``), a warm ``top_k``
over the whole matrix (p50 ms), and one edited vector made visible (a delta's overlay, ms).

Usage:  python bench/bench_dense_memory.py [--sizes 10000,100000] [--example-questions 9]
No Django needed.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_router import _anonymous_mb, _child_result, _rss_mb  # noqa: E402

DIM = 896
MODEL = "bench-model"


def _unit_rows(n: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    block = rng.standard_normal((n, DIM), dtype=np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    return block


def _catalog_vectors(n: int, layout: str) -> dict:
    """The vectors as a catalog holds them after a load: bytes objects (``copy``) or views into one block."""
    block = _unit_rows(n)
    ids = [f"PKG_{i:06d}" for i in range(n)]
    if layout == "copy":
        vectors = {pid: block[i].tobytes() for i, pid in enumerate(ids)}
        del block
        return vectors
    data = memoryview(block).cast("B")
    width = DIM * 4
    return {pid: data[i * width : (i + 1) * width] for i, pid in enumerate(ids)}


def _catalog_examples(ids, per_entry: int, layout: str) -> dict:
    """Each entry's example rows as a catalog load reads them: one bytes object per entry (``copy``, as
    main did before the shared file), or views into one block (``knowledge.embeddings.catalog_vectors``)."""
    if not per_entry:
        return {}
    pool = bytearray()
    for start in range(0, len(ids), 1000):
        pool += _unit_rows(min(1000, len(ids) - start) * per_entry, seed=7 + start).tobytes()
    width = per_entry * DIM * 4
    if layout == "copy":
        return {pid: bytes(pool[i * width : (i + 1) * width]) for i, pid in enumerate(ids)}
    block = memoryview(pool)
    return {pid: block[i * width : (i + 1) * width] for i, pid in enumerate(ids)}


def run(layout: str, size: int, directory: str, per_entry: int, queue) -> None:
    import numpy as np

    from knowledge.retrieval.dense import DenseIndex
    from knowledge.retrieval.dense_segment import dense_segment

    anonymous0 = _anonymous_mb()
    vectors = _catalog_vectors(size, layout)
    ids = list(vectors)
    examples = _catalog_examples(ids, per_entry, layout)
    started = time.perf_counter()
    if layout == "shared":
        dense = dense_segment(Path(directory), ids, vectors, model_id=MODEL, dim=DIM, examples=examples)
    else:
        dense = DenseIndex.from_rows([np.frombuffer(vectors[pid], dtype="<f4") for pid in ids], model_id=MODEL)
        if examples:
            dense.attach_examples({i: examples[pid] for i, pid in enumerate(ids)})
    if layout != "copy":  # Catalog.hold_vectors: views into the index's rows replace the load's copies
        rows = dense.base_rows()
        vectors = {pid: rows[i] for i, pid in enumerate(ids)}
        examples = {ids[i]: view for i, view in dense.example_rows().items()}
    ready_ms = (time.perf_counter() - started) * 1000
    gc.collect()
    anonymous1 = _anonymous_mb()
    questions = _unit_rows(60, seed=1)
    share = 0.3 if per_entry else 0.0
    times = []
    for q in questions:
        t = time.perf_counter()
        dense.top_k(q, 5, share)
        times.append((time.perf_counter() - t) * 1000)
    edited = dict(vectors)
    edited[ids[size // 2]] = _unit_rows(1, seed=2)[0].tobytes()
    t = time.perf_counter()
    if layout == "copy":  # main rebuilt the whole matrix for a delta, and attached every entry's rows again
        merged = DenseIndex.from_rows([np.frombuffer(edited[pid], dtype="<f4") for pid in ids], model_id=MODEL)
        if examples:
            merged.attach_examples({i: examples[pid] for i, pid in enumerate(ids)})
    else:
        merged = dense.overlay_over(edited, ids, [True] * size, examples)
    merged.top_k(questions[0], 5, share)
    visible_ms = (time.perf_counter() - t) * 1000
    queue.put(
        {
            "extra_anonymous": anonymous1 - anonymous0,
            "ready_ms": ready_ms,
            "top_k_p50": statistics.median(times[10:]),
            "visible_ms": visible_ms,
        }
    )


def write_first(size: int, directory: str, per_entry: int, queue) -> None:
    from knowledge.retrieval.dense_segment import dense_segment

    vectors = _catalog_vectors(size, "shared")
    examples = _catalog_examples(list(vectors), per_entry, "shared")
    started = time.perf_counter()
    dense_segment(Path(directory), list(vectors), vectors, model_id=MODEL, dim=DIM, examples=examples)
    queue.put({"write_ms": (time.perf_counter() - started) * 1000})


def prepare(size: int, directory: str, per_entry: int, queue) -> None:
    """The Celery task's way (``dense_segment_prepare``): rows streamed in no particular order, 2,000 at
    a time as a cursor fetches them, never all held; the peak RSS above the start counts the file's
    mapped pages being written (shared, in the page cache) as well as the process's own."""
    import numpy as np

    from knowledge.retrieval.dense_segment import dense_segment_prepare

    ids = [f"PKG_{i:06d}" for i in range(size)]
    order = np.random.default_rng(3).permutation(size)

    def rows():
        rng = np.random.default_rng(4)
        for start in range(0, size, 2000):
            block = rng.standard_normal((min(2000, size - start), DIM), dtype=np.float32)
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            asked = _unit_rows(len(block) * per_entry, seed=start).reshape(len(block), -1) if per_entry else None
            for j, i in enumerate(order[start : start + 2000].tolist()):
                yield ids[i], block[j].tobytes(), asked[j].tobytes() if per_entry else b""

    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS
    rss0, anonymous0 = _rss_mb(), _anonymous_mb()
    started = time.perf_counter()
    key, written, count = dense_segment_prepare(Path(directory), ids, rows(), model_id=MODEL, dim=DIM)
    elapsed = (time.perf_counter() - started) * 1000
    assert written and count == size
    queue.put(
        {"prepare_ms": elapsed, "peak_above_start": _peak_mb() - rss0, "extra_anonymous": _anonymous_mb() - anonymous0}
    )


def _peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[10_000, 100_000])
    parser.add_argument("--example-questions", type=int, default=0, help="example-question rows per entry")
    args = parser.parse_args()
    if args.example_questions < 0:
        parser.error("--example-questions: a count of 0 or more")
    per_entry = args.example_questions
    ctx = mp.get_context("spawn")
    print(f"entry vectors per process ({DIM} float32 dimensions, {DIM * 4} bytes each); one fresh process per cell")
    if per_entry:
        print(f"every entry with {per_entry} example-question vectors ({per_entry * DIM * 4:,} bytes an entry)")
    print()
    print("| entries | layout | extra anonymous MB | dense index ready ms | top_k p50 ms | one edit visible ms |")
    print("|---:|---|---:|---:|---:|---:|")
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-dense-") as directory:
            written = _child_result(ctx, write_first, (size, directory, per_entry))
            for layout in ("copy", "memory", "shared"):
                r = _child_result(ctx, run, (layout, size, directory, per_entry))
                print(
                    f"| {size:,} | {layout} | {r['extra_anonymous']:.0f} | {r['ready_ms']:.0f} "
                    f"| {r['top_k_p50']:.2f} | {r['visible_ms']:.1f} |",
                    flush=True,
                )
            print(f"| {size:,} | shared: the first process's write | | {written['write_ms']:.0f} | | |", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-dense-") as directory:
            r = _child_result(ctx, prepare, (size, directory, per_entry))
            print(
                f"| {size:,} | the Celery task's prepare, rows streamed (peak RSS above start {r['peak_above_start']:.0f} MB)"
                f" | {r['extra_anonymous']:.0f} | {r['prepare_ms']:.0f} | | |",
                flush=True,
            )


if __name__ == "__main__":
    main()
