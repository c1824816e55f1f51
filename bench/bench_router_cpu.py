"""Route CPU time per question at 10k entries: comparable between branches on a busy machine.

    python bench/bench_router_cpu.py [--size 10000] [--rounds 3]

Wall-clock p50 (bench_router.py) swings by ±40 % when other jobs share the two
cores; the process's own CPU time per question does not. Same synthetic
catalog and questions as bench_router.py; one process; 20 warm-up questions.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402

from knowledge.retrieval.index import RouterIndex  # noqa: E402


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
    samples = []
    for _ in range(args.rounds):
        for q in questions:
            started = time.process_time_ns()
            index.route(q)
            samples.append((time.process_time_ns() - started) / 1e6)
    print(
        f"{args.size:,} entries, {len(samples)} routes: CPU p50 {statistics.median(samples):.3f} ms, "
        f"mean {statistics.mean(samples):.3f} ms"
    )


if __name__ == "__main__":
    main()
