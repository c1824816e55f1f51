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
  builds that one index (each measurement runs in its own child process);
- shared index: a first process builds and writes the memory-mapped segment
  (build + write time, the write alone, the files the segment holds, peak RSS);
  a second process maps it (load time, the memory mappings and open file
  descriptors of the segment it then holds, warm route times over it, the
  extra private and RSS memory it costs) and makes one edited entry visible
  through a delta (apply + first route, ms), then routes with the delta live.

Usage:  python bench/bench_router.py            # 1k, 10k, 100k
        python bench/bench_router.py --quick    # 1k, 10k, fewer questions
No Django needed: the router core is pure Python.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import queue as _queue
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
    rng = random.Random(SEED + size)
    zipf = Zipf(make_vocabulary(rng), rng)
    return list(iter_catalog(size, rng, zipf)), rng, zipf


def iter_catalog(size: int, rng: random.Random | None = None, zipf: Zipf | None = None):
    """``make_catalog``'s entries one at a time (the same ones, in order): a builder that streams them
    never holds the catalog (``bench_build.py --streamed``)."""
    from knowledge.retrieval.entries import Entry

    if rng is None:
        rng = random.Random(SEED + size)
        zipf = Zipf(make_vocabulary(rng), rng)
    for i in range(size):
        pid = f"PKG_{i:06d}"
        roll = rng.random()
        kind = "procedure" if roll < 0.04 else "rule" if roll < 0.08 else "knowledge"
        links = " ".join(f"[[PKG_{rng.randrange(size):06d}]]" for _ in range(rng.randint(0, 3)))
        yield Entry(
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


def baseline(entries):
    """The baseline over ``entries``: rank-bm25's ``BM25Okapi`` over each entry's ID, title, summary,
    keywords and body, built here; returns its query function (the question analyzed, every document
    scored, the top 10 in order)."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from common.text import analyze

    bm25 = BM25Okapi([analyze(" ".join([e.package_id, e.title, e.summary, *e.keywords, e.body])) for e in entries])

    def query(question: str):
        scores = bm25.get_scores(analyze(question))
        top = np.argpartition(-scores, 10)[:10]
        return top[np.argsort(-scores[top])]

    return query


def run_one(impl: str, size: int, n_questions: int, queue) -> None:
    """In a fresh process: corpus, build, route; report times and peak RSS."""
    entries, rng, zipf = make_catalog(size)
    questions = make_questions(entries, rng, zipf, n_questions)
    if impl == "router":
        from knowledge.retrieval.index import RouterIndex

        started, cpu_started = time.perf_counter(), time.process_time()
        index = RouterIndex(entries)
        build = time.perf_counter() - started
        build_cpu = time.process_time() - cpu_started
        for q in questions[:10]:  # warm-up (stem cache, lazy typo table)
            index.route(q)
        samples = []
        cpu = []
        full = 0
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            result = index.route(q)
            samples.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            full += len(result.full)
        extra = f"{full / len(questions):.1f} full/q"
    else:
        started, cpu_started = time.perf_counter(), time.process_time()
        query = baseline(entries)
        build = time.perf_counter() - started
        build_cpu = time.process_time() - cpu_started
        for q in questions[:3]:
            query(q)
        samples = []
        cpu = []
        for q in questions:
            t, c = time.perf_counter(), time.process_time()
            query(q)
            samples.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        extra = "scores only"
    p50, p95 = _percentiles(samples)
    cpu50, cpu95 = _percentiles(cpu)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put(
        {
            "impl": impl,
            "size": size,
            "build": build,
            "build_cpu": build_cpu,
            "cpu50": cpu50,
            "cpu95": cpu95,
            "p50": p50,
            "p95": p95,
            "peak": peak_mb,
            "n": len(samples),
            "extra": extra,
        }
    )


def _private_mb() -> float:
    """This process's private resident memory (not shared with other processes), from smaps_rollup."""
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return float("nan")
    kb = sum(int(line.split()[1]) for line in text.splitlines() if line.startswith(("Private_Clean", "Private_Dirty")))
    return kb / 1024


def _anonymous_mb() -> float:
    """This process's anonymous memory (its heap: what no other process can share), from smaps_rollup."""
    try:
        text = Path("/proc/self/smaps_rollup").read_text()
    except OSError:
        return float("nan")
    return sum(int(line.split()[1]) for line in text.splitlines() if line.startswith("Anonymous:")) / 1024


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _segment_handles(segment: Path) -> tuple[int, int]:
    """(memory mappings, open file descriptors) of this process on files of ``segment``."""
    prefix = str(segment.resolve())
    maps = sum(1 for line in Path("/proc/self/maps").read_text().splitlines() if prefix in line)
    fds = 0
    for fd in Path("/proc/self/fd").iterdir():
        try:
            fds += os.readlink(fd).startswith(prefix)
        except OSError:  # closed meanwhile (the listing's own descriptor)
            pass
    return maps, fds


def run_segment_write(size: int, directory: str, queue) -> None:
    """In a fresh process: write the catalog's shared segment from its entries (what the first process
    does, ``knowledge.index_store``: ``segment_build``, no index in memory)."""
    from knowledge.retrieval.segment_build import segment_build
    from knowledge.retrieval.segments import segment_path

    entries, _, _ = make_catalog(size)
    started, cpu = time.perf_counter(), time.process_time()
    segment_build(Path(directory), "bench", entries)
    segment = segment_path(Path(directory), "bench")
    queue.put(
        {
            "write": time.perf_counter() - started,
            "write_cpu": time.process_time() - cpu,
            "files": sum(1 for p in segment.iterdir() if p.is_file()),
            "bytes": sum(p.stat().st_size for p in segment.iterdir() if p.is_file()),
            "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    )


def run_segment_map(size: int, directory: str, n_questions: int, queue) -> None:
    """In another fresh process: map the segment, route, then make one edit visible through a delta."""
    import dataclasses

    from knowledge.retrieval.delta import index_with_edits
    from knowledge.retrieval.index import RouterIndex
    from knowledge.retrieval.segments import segment_load, segment_path

    entries, rng, zipf = make_catalog(size)
    questions = make_questions(entries, rng, zipf, n_questions)
    rss0, private0, anonymous0 = _rss_mb(), _private_mb(), _anonymous_mb()
    started, cpu = time.perf_counter(), time.process_time()
    bm25, tables = segment_load(Path(directory), "bench")
    index = RouterIndex(entries, bm25=bm25, tables=tables)
    load, load_cpu = time.perf_counter() - started, time.process_time() - cpu
    maps, fds = _segment_handles(segment_path(Path(directory), "bench"))
    for q in questions:
        index.route(q)
    rss1, private1, anonymous1 = _rss_mb(), _private_mb(), _anonymous_mb()
    mapped, mapped_cpu = [], []  # warm routes over the mapped segment (the pass above warmed it)
    for q in questions:
        t, c = time.perf_counter(), time.process_time()
        index.route(q)
        mapped.append((time.perf_counter() - t) * 1000)
        mapped_cpu.append((time.process_time() - c) * 1000)
    # One package edited (admin save, import, API): apply the delta, answer the next question.
    edited = list(entries)
    target = len(edited) // 2
    edited[target] = dataclasses.replace(edited[target], body=edited[target].body + " revisado", revision=2)
    started, cpu = time.perf_counter(), time.process_time()
    merged = index_with_edits(index, edited, version=2, max_changes=256)
    merged.route(questions[0])
    visible, visible_cpu = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    samples = []
    for q in questions:
        t = time.perf_counter()
        merged.route(q)
        samples.append((time.perf_counter() - t) * 1000)
    queue.put(
        {
            "load": load,
            "load_cpu": load_cpu,
            "maps": maps,
            "fds": fds,
            "mapped_p50": _percentiles(mapped)[0],
            "mapped_cpu50": _percentiles(mapped_cpu)[0],
            "extra_private": private1 - private0,
            "extra_anonymous": anonymous1 - anonymous0,
            "extra_rss": rss1 - rss0,
            "visible": visible,
            "visible_cpu": visible_cpu,
            "delta_p50": _percentiles(samples)[0],
        }
    )


def measure_shared(size: int, n_questions: int) -> dict:
    import tempfile

    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="bench-router-index-") as directory:
        out = {}
        for target, args in ((run_segment_write, (size, directory)), (run_segment_map, (size, directory, n_questions))):
            out.update(_child_result(ctx, target, args))
    return out


def _child_result(ctx, target, args: tuple) -> dict:
    """Run ``target(*args, queue)`` in a fresh process and return what it put on the queue; a child that
    dies first (an import error, a missing rank-bm25, the OOM killer) stops the benchmark with its exit
    code instead of leaving the parent waiting on the queue for ever."""
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    while True:
        try:
            result = queue.get(timeout=1.0)
        except _queue.Empty:
            if not proc.is_alive():
                raise SystemExit(f"{target.__name__}{args!r} died with exit code {proc.exitcode}") from None
            continue
        proc.join()
        return result


def measure(impl: str, size: int, n_questions: int) -> dict:
    return _child_result(mp.get_context("spawn"), run_one, (impl, size, n_questions))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, fewer questions")
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=None)
    args = parser.parse_args()
    sizes = args.sizes or ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}; one question at a time.")
    print("Wall time (perf_counter) and, in brackets, this process's CPU time (process_time) per call.\n")
    print(
        "| entries | implementation | build s [cpu] | route p50 ms [cpu] | route p95 ms [cpu] | peak RSS MB | questions |"
    )
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
                f"| {size:,} | {label} | {r['build']:.2f} [{r['build_cpu']:.2f}] | {r['p50']:.3f} [{r['cpu50']:.3f}] "
                f"| {r['p95']:.3f} [{r['cpu95']:.3f}] | {r['peak']:.0f} | {r['n']} |",
                flush=True,
            )
        summary.append((size, base["p50"] / router["p50"], base["cpu50"] / max(router["cpu50"], 1e-9)))
    print("\nShared index: segment written by a first process, mapped by a second one; one edit through a delta.")
    print("Extra memory of the second process: after mapping the index and routing, minus before (its catalog")
    print("already loaded); private = not shared with other processes right now (smaps: it also counts the")
    print("segment's file pages while no other process maps them), anonymous = its own heap (never shareable),")
    print("RSS also counts shared pages. Segment files: the files of its directory (their total size);")
    print("mappings / fds: the second process's memory mappings and open descriptors of those files once loaded.\n")
    print(
        "| entries | segment build s [cpu] | segment files (MB) | peak RSS MB (writer, catalog held) "
        "| map + load s [cpu] | mappings / fds | route p50 ms [cpu] mapped | extra anonymous MB "
        "| extra private MB | extra RSS MB | edit visible ms [cpu] | route p50 ms with delta |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        r = measure_shared(size, 30 if args.quick else 100)
        print(
            f"| {size:,} | {r['write']:.2f} [{r['write_cpu']:.2f}] "
            f"| {r['files']} ({r['bytes'] / 2**20:.1f}) | {r['peak']:.0f} | {r['load']:.2f} [{r['load_cpu']:.2f}] "
            f"| {r['maps']} / {r['fds']} | {r['mapped_p50']:.3f} [{r['mapped_cpu50']:.3f}] | {r['extra_anonymous']:.0f} | {r['extra_private']:.0f} | {r['extra_rss']:.0f} "
            f"| {r['visible']:.1f} [{r['visible_cpu']:.1f}] | {r['delta_p50']:.3f} |",
            flush=True,
        )
    print()
    for size, speedup, cpu_speedup in summary:
        print(f"{size:>7,} entries: router p50 is {speedup:.2f}x the baseline's speed (wall), {cpu_speedup:.2f}x (CPU)")
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average at the end: {load}")


if __name__ == "__main__":
    main()
