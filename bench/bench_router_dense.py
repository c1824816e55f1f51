"""What the dense signal costs a route: p50/p95 wall and CPU time, with it off, always on, and gated.

    python bench/bench_router_dense.py [--size 10000] [--labeled] [--example-questions 9]

Two question sets:

- synthetic (default): bench_router.py's 10k-entry catalog and 300 questions. Entry vectors are
  random unit vectors: embedding 10,000 synthetic passages would take ~15 minutes and the cost
  per route is the same (one matrix-vector product over the entries, plus the question's own
  embedding, which is real: the bundled model runs on every fired question);
- ``--example-questions N``: every synthetic entry also gets N random example-question vectors
  (``DenseIndex.attach_examples``; the worst case: every entry's curators accepted N questions),
  scored with the shipped ``dense_closest_example_share``;
- ``--labeled``: every dev question of the labeled catalogs (knowledge/evaluation/catalogs, the
  sample catalog), each routed on its own catalog with its real vectors: how often the gate
  fires on questions people actually write.

Each mode starts with an empty question-vector cache (a repeated question would be a cache hit).
Load average is printed: the machine is shared, compare CPU time between modes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from common.text import retrieval_embeddings  # noqa: E402
from knowledge.retrieval import RouterConfig, RouterIndex  # noqa: E402
from knowledge.retrieval import dense as dense_module  # noqa: E402
from knowledge.retrieval.dense import DenseIndex  # noqa: E402

MODES = {
    "off": None,
    # Shipped since issue 12's sixteenth round: every part embedded.
    "always": "always",
    # The same without the whole message's meaning (issue 12's seventeenth round): one embedding less
    # per message of several parts.
    "no-msg": "always/no-message",
    "gated": "bm25_strong",
    # Shipped from issue 12's second round to its fifteenth: embed unless BM25's top is strong and
    # holds >= 70 % of the question.
    "covered": "covered",
}


def _pct(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q)) if samples else 0.0


class _Counter:
    """Counts the questions the gate let through (each costs an embedding)."""

    def __init__(self):
        self.fired = 0
        self._original = DenseIndex.query_vector

    def __enter__(self):
        counter = self

        def counting(index_self, text):
            counter.fired += 1
            return counter._original(index_self, text)

        DenseIndex.query_vector = counting
        return self

    def __exit__(self, *exc):
        DenseIndex.query_vector = self._original


def _time_routes(routes) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for route in routes:
        w0, c0 = time.perf_counter(), time.process_time()
        route()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return wall, cpu


def _report(label: str, mode: str, wall, cpu, fired: int, parts: int) -> None:
    print(
        f"{label:>10} {mode:>7}: wall p50 {_pct(wall, 50):7.3f} p95 {_pct(wall, 95):7.3f} ms | "
        f"CPU p50 {_pct(cpu, 50):7.3f} p95 {_pct(cpu, 95):7.3f} ms | embedded {fired}/{parts} parts",
        flush=True,
    )


def _config(mode: str | None, base: RouterConfig) -> RouterConfig:
    if mode is None:
        return replace(base, weights={**base.weights, "dense": 0.0})
    gate, _, variant = mode.partition("/")
    if variant == "no-message":
        return replace(base, dense_gate=gate, weights={**base.weights, "message": 0.0})
    return replace(base, dense_gate=gate)


def synthetic(size: int, examples: int = 0) -> None:
    import bench_router

    entries, rng, zipf = bench_router.make_catalog(size)
    questions = bench_router.make_questions(entries, rng, zipf, 300)
    vectors = np.random.default_rng(12).standard_normal((len(entries), retrieval_embeddings.DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dense = DenseIndex(vectors, np.ones(len(entries), dtype=bool))
    if examples:
        rows = np.random.default_rng(13).standard_normal((len(entries), examples, retrieval_embeddings.DIM))
        rows = (rows / np.linalg.norm(rows, axis=2, keepdims=True)).astype(np.float32)
        dense.attach_examples(dict(enumerate(rows)))
        del rows
    base = RouterConfig()
    for label, mode in MODES.items():
        index = RouterIndex(entries, config=_config(mode, base), dense=dense)
        for q in questions[:10]:  # warm-up (model load, caches of the analyzer)
            index.route(q + " aquecimento")
        retrieval_embeddings.clear_cache()
        with _Counter() as counter:
            wall, cpu = _time_routes([lambda q=q: index.route(q) for q in questions])
        _report(f"{size:,}" + (f" +{examples}q" if examples else ""), label, wall, cpu, counter.fired, len(questions))


def labeled() -> None:
    from knowledge.evaluation.tune import TUNING_INPUTS, context_of, dense_of, tuning_questions
    from knowledge.offline_catalog import load_package_folder

    base = RouterConfig()
    for label, mode in MODES.items():
        retrieval_embeddings.clear_cache()
        wall_all, cpu_all, fired, parts = [], [], 0, 0
        for name, (packages, _) in TUNING_INPUTS.items():
            entries = load_package_folder(packages)
            index = RouterIndex(entries, config=_config(mode, base), dense=dense_of(name, entries))
            rows = tuning_questions(name)
            routes = []
            for row in rows:
                focus, parents, page = context_of(row)
                routes.append(
                    lambda row=row, f=focus, p=parents, g=page: index.route(row["query"], focus=f, parents=p, page=g)
                )
            index.route("aquecimento do modelo")
            with _Counter() as counter:
                wall, cpu = _time_routes(routes)
            wall_all += wall
            cpu_all += cpu
            fired += counter.fired
            parts += sum(len(r.parts) for r in [index.route(row["query"]) for row in rows])
        _report("labeled", label, wall_all, cpu_all, fired, parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--labeled", action="store_true", help="The labeled catalogs' dev questions instead")
    parser.add_argument(
        "--example-questions", type=int, default=0, metavar="N", help="N example-question vectors per synthetic entry"
    )
    args = parser.parse_args()
    if not retrieval_embeddings.available():
        sys.exit("embeddings are off or the model is missing: nothing to measure")
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores); body chars {dense_module.PASSAGE_BODY_CHARS}")
    labeled() if args.labeled else synthetic(args.size, args.example_questions)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
