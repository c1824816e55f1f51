"""Route CPU time per question: comparable between branches on a busy machine.

    python bench/bench_router_cpu.py [--size 10000] [--rounds 3]

Wall-clock p50 (bench_router.py) swings by ±40 % when other jobs share the two
cores; the process's own CPU time per question swings much less (it still
rises by 10-25 % under a load average of 8-10: shared caches). Same synthetic
catalog and questions as bench_router.py; one process; 20 warm-up questions.

Two figures per question:
- ``route``: ``RouterIndex.route`` alone, what a turn pays (it reads the
  delivered ids, never the reasons);
- ``route + as_dict``: the route and its JSON-ready body with every entry's
  reasons (``why``) formatted, what ``POST /api/v1/context`` and MCP pay.
The first round meets every question for the first time (per-term and
per-entry look-ups are worked out then); the later rounds repeat them.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402

from knowledge.retrieval.index import RouterIndex  # noqa: E402


def _summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered):.3f} ms, p95 {p95:.3f} ms, mean {statistics.mean(ordered):.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    entries, rng, zipf = bench_router.make_catalog(args.size)
    questions = bench_router.make_questions(entries, rng, zipf, 300)
    index = RouterIndex(entries)
    for q in questions[:20]:
        index.route(q)
    first, route, api = [], [], []
    for round_ in range(args.rounds):
        for q in questions:
            started = time.process_time_ns()
            index.route(q)
            spent = (time.process_time_ns() - started) / 1e6
            (first if round_ == 0 else route).append(spent)
            started = time.process_time_ns()
            index.route(q).as_dict()
            api.append((time.process_time_ns() - started) / 1e6)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{args.size:,} entries, CPU time per question (load average {load}):")
    print(f"  route, first round   ({len(first)}): {_summary(first)}")
    if route:
        print(f"  route, later rounds  ({len(route)}): {_summary(route)}")
    print(f"  route + as_dict      ({len(api)}): {_summary(api)}")


if __name__ == "__main__":
    main()
