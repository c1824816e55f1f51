"""Router against rank-bm25 over the same questions in one process: a ratio less at the mercy of drift.

    python bench/bench_router_paired.py [--sizes 1000,10000,100000] [--questions 200]

``bench_router.py`` times the router and the baseline in two child processes,
one after the other: on a machine whose speed drifts (the same command has
given a 1,000-entry route p50 of 0.31 and of 0.49 ms minutes apart here), the
ratio of the two p50s moves with whatever the machine did between them. Here
both live in one process, over the same synthetic catalog and questions as
``bench_router.py``, asked of both in alternating blocks of ``--block``
questions (20: a block of the router, the same block of the baseline, the
next block the other way round), so a slow stretch of a second or so slows
both. Blocks rather than single questions: one call of the baseline sweeps
its whole catalog through the CPU caches, and alternating question by
question slowed the router (10,000 entries, one pair of runs: p50 0.99 ms
alternating by question, 0.90 ms by blocks of 20).
Reported per size:

- p50 / p95 of each, in wall time (``perf_counter``) and CPU time (``process_time``);
- the ratio of the two p50s, and the median of the per-question ratios
  (baseline time ÷ router time of the same question) with their 95 %
  bootstrap interval (2,000 resamples of the questions, fixed seed).

The router's figure is ``RouterIndex.route`` in memory, each question asked
for the first time (what ``bench_router.py``'s first table times); the
baseline's is the question analyzed, ``BM25Okapi.get_scores`` over the whole
catalog and a top-10 selection (``bench_router.baseline``). 10 warm-up
questions each, not counted.

What pairing does not remove: the machine's slow stretches do not slow both
alike. rank-bm25 sweeps its whole catalog per question (memory-bound), the
router runs the interpreter over a few hundred postings, and on this 2-core
machine five runs within half an hour gave 1,000-entry ratios of 2.1 to 2.8 (router
p50 0.35 to 0.61 ms): read a ratio with its run's p50s, and compare runs of
one machine at one time. The router's own p50 here is also a little slower
than ``bench_router.py``'s (its process holds the baseline's catalog too).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_router  # noqa: E402

WARM_UP = 10
# Questions per block: each block is asked of one, then the other (only the first of a block meets the
# caches the other one's block left).
BLOCK = 20


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def _bootstrap_median(values: list[float], resamples: int = 2000, seed: int = 17) -> tuple[float, float]:
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def measure(size: int, n_questions: int, block: int = BLOCK) -> dict:
    from knowledge.retrieval.index import RouterIndex

    entries, rng, zipf = bench_router.make_catalog(size)
    questions = bench_router.make_questions(entries, rng, zipf, n_questions + WARM_UP)
    index = RouterIndex(entries)
    query = bench_router.baseline(entries)
    for q in questions[:WARM_UP]:
        index.route(q)
        query(q)
    walls: dict[str, list[float]] = {"router": [], "baseline": []}
    cpus: dict[str, list[float]] = {"router": [], "baseline": []}
    calls = {"router": index.route, "baseline": query}
    asked = questions[WARM_UP:]
    for b, lo in enumerate(range(0, len(asked), block)):
        for name in ("router", "baseline") if b % 2 == 0 else ("baseline", "router"):
            call = calls[name]
            for q in asked[lo : lo + block]:
                t, c = time.perf_counter(), time.process_time()
                call(q)
                walls[name].append((time.perf_counter() - t) * 1000)
                cpus[name].append((time.process_time() - c) * 1000)
    out: dict[str, object] = {"size": size, "n": n_questions}
    for kind, samples in (("wall", walls), ("cpu", cpus)):
        for name in ("router", "baseline"):
            out[f"{name}_{kind}_p50"] = statistics.median(samples[name])
            out[f"{name}_{kind}_p95"] = _p95(samples[name])
        ratios = [b / max(r, 1e-9) for r, b in zip(samples["router"], samples["baseline"], strict=True)]
        out[f"{kind}_p50_ratio"] = out[f"baseline_{kind}_p50"] / max(out[f"router_{kind}_p50"], 1e-9)
        out[f"{kind}_ratio_median"] = statistics.median(ratios)
        out[f"{kind}_ratio_interval"] = _bootstrap_median(ratios)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1_000, 10_000, 100_000])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--block", type=int, default=BLOCK, help="questions asked of one before the other")
    args = parser.parse_args()
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}; paired, one process a size.")
    print("Wall ms [CPU ms]; ratio = baseline ÷ router (higher: the router is faster).\n")
    print(
        "| entries | router p50 | router p95 | rank-bm25 p50 | rank-bm25 p95 | ratio of p50s "
        "| median per-question ratio (95 % interval) | questions |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        r = measure(size, args.questions, args.block)
        lo, hi = r["wall_ratio_interval"]
        clo, chi = r["cpu_ratio_interval"]
        print(
            f"| {size:,} | {r['router_wall_p50']:.3f} [{r['router_cpu_p50']:.3f}] "
            f"| {r['router_wall_p95']:.3f} [{r['router_cpu_p95']:.3f}] "
            f"| {r['baseline_wall_p50']:.3f} [{r['baseline_cpu_p50']:.3f}] "
            f"| {r['baseline_wall_p95']:.3f} [{r['baseline_cpu_p95']:.3f}] "
            f"| {r['wall_p50_ratio']:.2f}x [{r['cpu_p50_ratio']:.2f}x] "
            f"| {r['wall_ratio_median']:.2f}x ({lo:.2f}-{hi:.2f}) [{r['cpu_ratio_median']:.2f}x ({clo:.2f}-{chi:.2f})] "
            f"| {r['n']} |",
            flush=True,
        )
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nload average at the end: {load}")


if __name__ == "__main__":
    main()
