"""What the example questions' words cost (knowledge/retrieval/questions.py, the "questions" signal).

    python bench/bench_questions.py [--sizes 1000 10000] [--per-entry 9]

bench_router.py's synthetic catalog; every entry gets ``--per-entry`` example questions of 6–10
words drawn from its own title and body plus common words (the worst case: every entry's curators
accepted that many), and bench_router.py's 300 questions are routed (dense signal off: this
signal does not need it). Reported per size:

- build: seconds for ``QuestionsIndex.build`` over the catalog (what every process pays once,
  on top of the router index), and its postings' size in MB;
- route p50/p95 wall and CPU ms with the signal's weight 0 (as shipped before it) and 1 (shipped);
- one edit: ms for ``with_edits`` of one entry's questions (what a delta adds).

Load average is printed: the machine is shared, compare CPU time between modes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_router  # noqa: E402

from knowledge.retrieval import RouterConfig, RouterIndex  # noqa: E402
from knowledge.retrieval.questions import QuestionsIndex  # noqa: E402

COMMON = ("como", "posso", "quanto", "quando", "onde", "preciso", "qual", "meu", "minha", "fazer", "tem")


def with_questions(entries, per_entry: int, rng: random.Random) -> list:
    out = []
    for e in entries:
        words = [w for w in f"{e.title} {e.body}".split() if not w.startswith("[[")]
        asked = tuple(
            " ".join([rng.choice(COMMON), *rng.sample(words, min(len(words), rng.randint(5, 9)))]) + "?"
            for _ in range(per_entry)
        )
        out.append(dataclasses.replace(e, example_questions=asked))
    return out


def _pct(samples, q):
    return float(np.percentile(samples, q))


def _routes(index, questions) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for q in questions:
        w0, c0 = time.perf_counter(), time.process_time()
        index.route(q)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return wall, cpu


def run(size: int, per_entry: int) -> None:
    entries, rng, zipf = bench_router.make_catalog(size)
    questions = bench_router.make_questions(entries, rng, zipf, 300)
    entries = with_questions(entries, per_entry, random.Random(size))
    base = RouterConfig(weights={**RouterConfig().weights, "dense": 0.0})
    cfg = base
    started = time.perf_counter()
    built = QuestionsIndex.build(entries, k1=cfg.k1, b=cfg.b, delta=cfg.delta)
    build_s = time.perf_counter() - started
    postings_mb = sum(s.nbytes + f.nbytes for s, f in built.postings.values()) / 1e6
    print(
        f"{size:>7,} entries × {per_entry} questions: build {build_s:6.3f} s, {len(built.postings):,} terms, "
        f"postings {postings_mb:5.1f} MB",
        flush=True,
    )
    for weight in (0.0, 1.0):
        index = RouterIndex(entries, config=replace(base, weights={**base.weights, "questions": weight}))
        for q in questions[:20]:
            index.route(q + " aquecimento")
        wall, cpu = _routes(index, questions)
        print(
            f"{'':>9}questions weight {weight}: route wall p50 {_pct(wall, 50):6.3f} p95 {_pct(wall, 95):6.3f} ms | "
            f"CPU p50 {_pct(cpu, 50):6.3f} p95 {_pct(cpu, 95):6.3f} ms",
            flush=True,
        )
    edited = dataclasses.replace(entries[size // 2], example_questions=("Como faço uma pergunta nova?",))
    times = []
    for _ in range(20):
        started = time.perf_counter()
        built.with_edits([(size // 2, edited)], [], entries, n_slots=size)
        times.append((time.perf_counter() - started) * 1000)
    print(f"{'':>9}one edit (with_edits): p50 {_pct(times, 50):6.3f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--per-entry", type=int, default=9)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}", flush=True)
    for size in args.sizes:
        run(size, args.per_entry)


if __name__ == "__main__":
    main()
