"""Ontology routing speed, pure Python (no database): corpus build and one route.

The bundled 74 sample chunks, then replicas of them placed in the other biomes (ids
suffixed), as in a large multi-biome corpus where the profile's filters (here: Cerrado)
keep only a small part. Shows how the cost grows with the corpus. Run:

    .venv/bin/python bench/bench_ontology_route.py [--scales 1 20 200] [--repeat 30]
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from ontology.routing import data  # noqa: E402
from ontology.routing.corpus import ChunkRecord, Corpus  # noqa: E402
from ontology.routing.distribution import SkillSpec  # noqa: E402
from ontology.routing.engine import route  # noqa: E402

OTHER_BIOMES = ("mata_atlantica", "pampa", "caatinga", "amazonia", "pantanal")
QUERIES = {
    "diagnosis (7-step chain)": "meu solo está com baixa nodulação no segundo ano de soja",
    "recommendation (graphrag)": "como melhorar a nodulação da soja?",
    "concept (raptor)": "o que é agricultura de processo?",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 20, 200])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
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
