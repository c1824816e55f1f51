"""Ontology routing speed, pure Python (no database): corpus build and one route.

The bundled 74 sample chunks, then replicas of them placed in the other biomes (ids
suffixed), as in a large multi-biome corpus where the profile's filters (here: Cerrado)
keep only a small part. Shows how the cost grows with the corpus. First, the classifiers:
fitting them at process start from the committed training vectors (wall and CPU time), and
classifying questions and chunks the embedding cache has never seen. Run:

    .venv/bin/python bench/bench_ontology_route.py [--scales 1 20 200] [--repeat 30] [--models-only]
    CONTEXTO_EMBEDDINGS=off .venv/bin/python bench/bench_ontology_route.py --models-only   # term models alone
"""

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from common.text import embeddings  # noqa: E402
from ontology.routing import classifier, data, patterns  # noqa: E402
from ontology.routing.corpus import ChunkRecord, Corpus  # noqa: E402
from ontology.routing.distribution import SkillSpec  # noqa: E402
from ontology.routing.engine import route  # noqa: E402

OTHER_BIOMES = ("mata_atlantica", "pampa", "caatinga", "amazonia", "pantanal")
QUERIES = {
    "diagnosis (7-step chain)": "meu solo está com baixa nodulação no segundo ano de soja",
    "recommendation (graphrag)": "como melhorar a nodulação da soja?",
    "concept (raptor)": "o que é agricultura de processo?",
}


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def bench_models(repeat: int) -> None:
    mode = "terms + embeddings" if embeddings.enabled() else "terms alone (CONTEXTO_EMBEDDINGS=off)"
    print(f"classifiers: {mode}; load average {os.getloadavg()[0]:.2f}")
    print("| step | wall ms | CPU ms |")
    print("|---|---:|---:|")
    for name, fit in (
        ("fit pattern model", patterns.pattern_model),
        ("fit chunk classifier", classifier.chunk_classifier),
    ):
        runs = []
        for _ in range(3):
            fit.cache_clear()
            runs.append(_timed(fit))
        print(
            f"| {name} (median of 3) | {statistics.median(r[0] for r in runs):.0f} | "
            f"{statistics.median(r[1] for r in runs):.0f} |"
        )
    if embeddings.enabled():
        print(f"| load the embedding engine | {_timed(embeddings.available)[0]:.0f} | |")
    unseen = [f"{q} (variante {i})" for i in range(repeat) for q in QUERIES.values()][:repeat]
    runs = [_timed(lambda q=q: patterns.classify(q)) for q in unseen]
    print(
        f"| classify an unseen question (median of {len(runs)}) | {statistics.median(r[0] for r in runs):.1f} | "
        f"{statistics.median(r[1] for r in runs):.1f} |"
    )
    rows = [json.loads(line) for line in data.SAMPLE_CHUNKS_FILE.read_text(encoding="utf-8").splitlines() if line]
    texts = [f"{r['texto']} ({i})" for i, r in enumerate(rows[:repeat])]
    runs = [_timed(lambda t=t: classifier.propose_class(t)) for t in texts]
    print(
        f"| propose a class for an unseen chunk (median of {len(runs)}) | {statistics.median(r[0] for r in runs):.1f} | "
        f"{statistics.median(r[1] for r in runs):.1f} |"
    )
    print()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 20, 200])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--models-only", action="store_true")
    args = parser.parse_args()
    bench_models(args.repeat)
    if args.models_only:
        return
    rows = [json.loads(line) for line in data.SAMPLE_CHUNKS_FILE.read_text(encoding="utf-8").splitlines() if line]
    catalog = {s["id"]: SkillSpec.from_seed(s) for s in data.skills_file()["skills"]}
    skills = [catalog[s] for s in ("bioma_cerrado", "graos_soja_milho", "transicao_em_curso", "produtor_rural")]
    print(f"| chunks | build ms | {' | '.join(QUERIES)} |")
    print("|---:|---:|" + "---:|" * len(QUERIES))
    for scale in args.scales:
        records = [ChunkRecord.from_seed(r) for r in rows] + [
            ChunkRecord.from_seed(
                {**r, "chunk_id": f"{r['chunk_id']}_{i}", "bioma": [OTHER_BIOMES[i % len(OTHER_BIOMES)]]}
            )
            for i in range(1, scale)
            for r in rows
        ]
        started = time.perf_counter()
        corpus = Corpus(records)
        build_ms = (time.perf_counter() - started) * 1000
        cells = []
        for message in QUERIES.values():
            route(message=message, skills=skills, corpus=corpus, skill_catalog=catalog)  # warm postings
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                route(message=message, skills=skills, corpus=corpus, skill_catalog=catalog)
                times.append((time.perf_counter() - started) * 1000)
            cells.append(f"{statistics.median(times):.1f}")
        print(f"| {len(records):,} | {build_ms:.0f} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
