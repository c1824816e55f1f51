"""Knowledge router benchmark: sparse BM25+ router vs rank-bm25's naive scan.

Builds synthetic Portuguese-like catalogs (1k, 10k, 100k entries: Zipf-
distributed pseudo-Portuguese words with accents and pt suffixes, stop words,
titles, summaries, keywords, aliases, semantic IDs, wiki links, a few rules,
strict rules and procedures) and reports, side by side in one run:

- build: seconds to analyze the entries and build the index;
- route p50/p95: milliseconds per question, one at a time. For the router
  this is the whole `RouterIndex.route` (splitting, every signal, fusion,
  delivery shaping); for the baseline it is analysis + `BM25Okapi.get_scores`
  over the whole corpus + a top-10 selection;
- peak memory: peak RSS of a fresh process that generates the corpus and
  builds that one index (each measurement runs in its own child process).

Usage:  python bench/bench_router.py            # 1k, 10k, 100k
        python bench/bench_router.py --quick    # 1k, 10k, fewer questions
No Django needed: the router core is pure Python.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SEED = 20261129
VOCABULARY = 30_000
ONSETS = [
    "",
    "b",
    "c",
    "d",
    "f",
    "g",
    "j",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "br",
    "cr",
    "pr",
    "tr",
    "ch",
    "lh",
    "nh",
]
VOWELS = ["a", "e", "i", "o", "u", "á", "é", "ê", "í", "ó", "ô", "ã", "õ"]
SUFFIXES = [
    "ção",
    "ções",
    "mente",
    "ar",
    "er",
    "ir",
    "ado",
    "ada",
    "idade",
    "os",
    "as",
    "ência",
    "ável",
    "ista",
    "agem",
    "",
]
STOP = "a o os as de da do das dos e em para com por que um uma no na se não mais como ao pelo pela".split()


def make_vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY:
        syllables = rng.randint(1, 3)
        stem = "".join(
            rng.choice(ONSETS) + rng.choice(VOWELS[:5] if rng.random() < 0.8 else VOWELS) for _ in range(syllables)
        )
        words.add(stem + rng.choice(SUFFIXES))
    return sorted(words)


class Zipf:
    def __init__(self, words: list[str], rng: random.Random, s: float = 1.07):
        import numpy as np

        weights = 1.0 / np.arange(1, len(words) + 1) ** s
        self.cdf = np.cumsum(weights / weights.sum())
        self.words = words
        self.rng = np.random.default_rng(rng.randint(0, 2**31))

    def sample(self, n: int) -> list[str]:
        import numpy as np

        idx = np.searchsorted(self.cdf, self.rng.random(n))
        return [self.words[min(i, len(self.words) - 1)] for i in idx]


def sentence(zipf: Zipf, rng: random.Random, n: int) -> str:
    out = []
    for w in zipf.sample(n):
        if rng.random() < 0.35:
            out.append(rng.choice(STOP))
        out.append(w)
    return " ".join(out)


def make_catalog(size: int):
    from knowledge.retrieval.entries import Entry

    rng = random.Random(SEED + size)
    zipf = Zipf(make_vocabulary(rng), rng)
    entries = []
    for i in range(size):
        pid = f"PKG_{i:06d}"
        roll = rng.random()
        kind = "procedure" if roll < 0.04 else "rule" if roll < 0.08 else "knowledge"
        links = " ".join(f"[[PKG_{rng.randrange(size):06d}]]" for _ in range(rng.randint(0, 3)))
        entries.append(
            Entry(
                package_id=pid,
                title=sentence(zipf, rng, rng.randint(3, 7)).capitalize(),
                summary=sentence(zipf, rng, rng.randint(8, 14)),
                kind=kind,
                strict=kind == "rule" and rng.random() < 0.02,
                aliases=(f"ALIAS_{i:06d}",),
                keywords=tuple(" ".join(zipf.sample(rng.randint(1, 2))) for _ in range(5)),
                semantic_ids=(f"area{i % 50}.screen{i % 977}.field{i}",),
                body=sentence(zipf, rng, rng.randint(80, 300)) + " " + links,
                revision=1,
            )
        )
    return entries, rng, zipf


def make_questions(entries, rng: random.Random, zipf: Zipf, n: int) -> list[str]:
    questions = []
    for _ in range(n):
        entry = rng.choice(entries)
        words = [w for w in (entry.title + " " + entry.body).split() if w not in STOP and not w.startswith("[[")]
        picked = rng.sample(words, min(len(words), rng.randint(2, 8)))
        if rng.random() < 0.2:
            picked += zipf.sample(1)  # a word from elsewhere
        roll = rng.random()
        if roll < 0.1:
            picked = ["qual", "o", *picked[:3], "e", "como", *picked[3:]]  # two parts
        elif roll < 0.15:
            picked = [entry.package_id, *picked[:2]]  # an ID named: the cascade
        questions.append(" ".join(picked) + "?")
    return questions


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def run_one(impl: str, size: int, n_questions: int, queue) -> None:
    """In a fresh process: corpus, build, route; report times and peak RSS."""
    import numpy as np

    entries, rng, zipf = make_catalog(size)
    questions = make_questions(entries, rng, zipf, n_questions)
    if impl == "router":
        from knowledge.retrieval.index import RouterIndex

        started = time.perf_counter()
        index = RouterIndex(entries)
        build = time.perf_counter() - started
        for q in questions[:10]:  # warm-up (stem cache, lazy typo table)
            index.route(q)
        samples = []
        full = 0
        for q in questions:
            t = time.perf_counter()
            result = index.route(q)
            samples.append((time.perf_counter() - t) * 1000)
            full += len(result.full)
        extra = f"{full / len(questions):.1f} full/q"
    else:
        from rank_bm25 import BM25Okapi

        from common.text import analyze

        started = time.perf_counter()
        docs = [analyze(" ".join([e.package_id, e.title, e.summary, *e.keywords, e.body])) for e in entries]
        bm25 = BM25Okapi(docs)
        build = time.perf_counter() - started
        for q in questions[:3]:
            bm25.get_scores(analyze(q))
        samples = []
        for q in questions:
            t = time.perf_counter()
            scores = bm25.get_scores(analyze(q))
            top = np.argpartition(-scores, 10)[:10]
            top[np.argsort(-scores[top])]
            samples.append((time.perf_counter() - t) * 1000)
        extra = "scores only"
    p50, p95 = _percentiles(samples)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        {
            "impl": impl,
            "size": size,
            "build": build,
            "p50": p50,
            "p95": p95,
            "peak": peak_mb,
            "n": len(samples),
            "extra": extra,
        }
    )


def measure(impl: str, size: int, n_questions: int) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=run_one, args=(impl, size, n_questions, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, fewer questions")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None)
    args = parser.parse_args()
    sizes = args.sizes or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; one question at a time.\n")
    print("| entries | implementation | build s | route p50 ms | route p95 ms | peak RSS MB | questions |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    summary = []
    for size in sizes:
        n_router = 100 if args.quick else 300
        n_base = 50 if size >= 100_000 else (40 if args.quick else 200)
        router = measure("router", size, n_router)
        base = measure("baseline", size, n_base)
        for r, label in (
            (router, "router: routing + shaping (BM25+ sparse)"),
            (base, "baseline: rank-bm25 BM25Okapi get_scores + top-10"),
        ):
            print(
                f"| {size:,} | {label} | {r['build']:.2f} | {r['p50']:.3f} | {r['p95']:.3f} | {r['peak']:.0f} | {r['n']} |",
                flush=True,
            )
        summary.append((size, base["p50"] / router["p50"]))
    print()
    for size, speedup in summary:
        print(f"{size:>7,} entries: router p50 is {speedup:.0f}x faster than the baseline's p50")


if __name__ == "__main__":
    main()
