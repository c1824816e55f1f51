"""Router index build at one size, in this process: time, CPU, and the peak RSS counted two ways.

    python bench/bench_build.py [--size 100000] [--write | --streamed]

Generates ``bench_router``'s synthetic catalog, then builds ``RouterIndex`` over it
(and with ``--write`` exports the per-entry tables and writes the shared segment,
what the first process of a catalog version does). Prints one JSON line:

- ``rss_before``: RSS once the catalog is generated (the interpreter, numpy and the
  entries: what the building process holds before the build starts);
- ``build`` / ``build_cpu``: wall and CPU seconds of ``RouterIndex(entries)``;
- ``peak_build``: peak RSS during the build alone (the kernel's high-water mark is
  reset after the catalog is generated: ``/proc/self/clear_refs``), and
  ``peak_build_above_catalog`` = ``peak_build - rss_before``;
- ``rss_after_build``; with ``--write``: ``write`` / ``write_cpu`` (tables export +
  segment write), ``peak_write`` (peak of build + write) and ``segment_sha1`` (of
  ``arrays.bin``: equal between branches when the segment is byte-identical; since format 4 it
  does not depend on ``PYTHONHASHSEED``, before it the typo table's order did). The write
  follows ``knowledge.index_store``: the index's Python tables are dropped once exported.

With ``--streamed``: the segment is written by ``segment_build`` from the catalog's entries read
back batch by batch from a spool file (generated one at a time by ``bench_router.iter_catalog`` and
pickled 4,096 at a time beforehand), as a builder streaming rows from a cursor would: no index and no
catalog in memory. Then ``rss_before`` is the process before the build (interpreter, numpy, the
modules), ``build`` / ``build_cpu`` include reading the spool (``read_cpu``: reading it alone, in a
separate pass), and ``peak_build`` is the whole process's peak.

Linux only (reads /proc). One build per process: run it once per branch, back to back.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--write", action="store_true", help="also export the tables and write the segment")
    modes.add_argument("--streamed", action="store_true", help="segment_build from entries read back from a spool")
    args = parser.parse_args()
    if args.streamed:
        streamed(args.size)
        return
    entries, _, _ = bench_router.make_catalog(args.size)
    from knowledge.retrieval.index import RouterIndex
    from knowledge.retrieval.segments import segment_path, segment_write

    gc.collect()
    out: dict[str, object] = {"size": args.size, "load": os.getloadavg()[0], "rss_before": _status_mb("VmRSS")}
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM): count the build alone
    started, cpu = time.perf_counter(), time.process_time()
    index = RouterIndex(entries)
    out["build"], out["build_cpu"] = time.perf_counter() - started, time.process_time() - cpu
    out["peak_build"] = _status_mb("VmHWM")
    out["peak_build_above_catalog"] = out["peak_build"] - out["rss_before"]
    out["rss_after_build"] = _status_mb("VmRSS")
    if args.write:
        directory = Path(tempfile.mkdtemp(prefix="bench-build-"))
        try:
            started, cpu = time.perf_counter(), time.process_time()
            bm25, tables = index.bm25, index.shared_tables()
            del index  # as knowledge.index_store does: the Python tables go before the write
            segment_write(directory, "bench", bm25, tables=tables)
            out["write"], out["write_cpu"] = time.perf_counter() - started, time.process_time() - cpu
            out["peak_write"] = _status_mb("VmHWM")
            out["segment_sha1"] = _sha1(segment_path(directory, "bench") / "arrays.bin")
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    _report(out)


def _report(out: dict[str, object]) -> None:
    """The run's figures as one JSON line, with the load average at the end."""
    out["load_end"] = os.getloadavg()[0]
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}))


def _sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _spooled(path: Path):
    """The entries pickled batch by batch in ``path``, read back one batch at a time (as rows from a cursor)."""
    with open(path, "rb") as fh:
        while True:
            try:
                yield from pickle.load(fh)
            except EOFError:
                return


def streamed(size: int) -> None:
    from knowledge.retrieval.segment_build import segment_build
    from knowledge.retrieval.segments import segment_path

    directory = Path(tempfile.mkdtemp(prefix="bench-build-"))
    spool = directory / "entries.pickle"
    try:
        with open(spool, "wb") as fh:  # generated and spooled a batch at a time: never all in memory
            batch = []
            for entry in bench_router.iter_catalog(size):
                batch.append(entry)
                if len(batch) == 4096:
                    pickle.dump(batch, fh, protocol=pickle.HIGHEST_PROTOCOL)
                    batch = []
            pickle.dump(batch, fh, protocol=pickle.HIGHEST_PROTOCOL)
        started = time.process_time()
        for _ in _spooled(spool):
            pass
        read_cpu = time.process_time() - started
        gc.collect()
        out: dict[str, object] = {"size": size, "mode": "streamed", "load": os.getloadavg()[0]}
        out["rss_before"] = _status_mb("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")
        started, cpu = time.perf_counter(), time.process_time()
        segment_build(directory, "bench", _spooled(spool))
        out["build"], out["build_cpu"] = time.perf_counter() - started, time.process_time() - cpu
        out["read_cpu"] = read_cpu
        out["peak_build"] = _status_mb("VmHWM")
        out["peak_build_above_start"] = out["peak_build"] - out["rss_before"]
        out["rss_after_build"] = _status_mb("VmRSS")
        out["segment_sha1"] = _sha1(segment_path(directory, "bench") / "arrays.bin")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    _report(out)


if __name__ == "__main__":
    main()
