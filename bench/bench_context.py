"""Benchmark: validation + resolution of a typical ~2 KB UI context (the turn's context step).

Target: p50 ≤ 1 ms for validate (size, schema, age, hash) + resolve, on one core.
Pure Python, no database: run from the repository root with

    .venv/bin/python bench/bench_context.py [--iterations 3000]

and paste the table into the README.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conversations.context import (  # noqa: E402
    build_prompt_context,
    canonical_json,
    redact_context,
    resolve,
    validate_context,
)

NOW = dt.datetime(2026, 9, 5, 12, 0, 0, tzinfo=dt.UTC)
MESSAGES = [
    "Explique isso.",
    "Altere isso para 30 dias.",
    "O que é o campo Data de Início?",
    "Qual é a validade?",
    "O que posso fazer aqui?",
    "What is below?",
    "Explique esse campo Data de Início.",
    "Quais tipos de permissão existem para trabalho em altura?",
]


def typical_context() -> dict:
    base = "workPermit.components.equipment"
    fields = [
        ("type", "Tipo de Equipamento"),
        ("validity", "Validade"),
        ("startDate", "Data de Início"),
        ("inspector", "Inspetor Responsável"),
        ("lastInspection", "Última Inspeção"),
        ("certificate", "Certificado"),
    ]
    return {
        "application": {"applicationId": "sst", "applicationVersion": "8.14.2", "environment": "production"},
        "navigation": {
            "route": "/work-permits/4821/components",
            "routeName": "workPermit.details",
            "params": {"id": "4821", "tab": "components"},
            "breadcrumbs": [{"label": "Permissões de Trabalho", "route": "/work-permits"}],
        },
        "page": {
            "id": "workPermit.details",
            "type": "details",
            "title": "Permissão de Trabalho",
            "semanticId": "workPermit",
        },
        "tabs": [
            {"id": "general", "title": "Geral", "index": 0, "active": False},
            {"id": "components", "title": "Componentes", "index": 1, "active": True},
            {"id": "documents", "title": "Documentos", "index": 2, "active": False},
            {"id": "approval", "title": "Aprovação", "index": 3, "active": False},
        ],
        "activeTabId": "components",
        "focus": {
            "semanticId": f"{base}.validity",
            "type": "field",
            "label": "Validade",
            "parentIds": ["workPermit", "workPermit.components", base],
            "value": "15 dias",
        },
        "selection": {
            "entityType": "workPermit",
            "entityId": "4821",
            "displayName": "PT-2026-004821",
            "fields": {"status": "aprovada", "cpf": "123.456.789-09", "equipamento": "Andaime"},
        },
        "elements": [{"semanticId": base, "type": "component", "label": "Equipamento"}]
        + [{"semanticId": f"{base}.{key}", "type": "field", "label": label} for key, label in fields],
        "viewport": {
            "visibleSemanticIds": [f"{base}.{key}" for key, _ in fields[:5]],
            "topVisibleElement": f"{base}.type",
            "bottomVisibleElement": f"{base}.lastInspection",
        },
        "user": {"locale": "pt-BR", "timezone": "America/Sao_Paulo"},
        "capturedAt": "2026-09-05T11:59:50Z",
        "contextVersion": 42,
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3000)
    args = parser.parse_args()

    context = typical_context()
    size = len(canonical_json(context))
    stages: dict[str, list[float]] = {
        "validate": [],
        "redact": [],
        "resolve": [],
        "prompt": [],
        "validate+resolve": [],
        "all four": [],
    }

    for i in range(args.iterations + 200):
        message = MESSAGES[i % len(MESSAGES)]
        t0 = time.perf_counter_ns()
        validated = validate_context(context, now=NOW)
        t1 = time.perf_counter_ns()
        redacted, _ = redact_context(validated.data)
        t2 = time.perf_counter_ns()
        resolution = resolve(message, redacted)
        t3 = time.perf_counter_ns()
        build_prompt_context(redacted, resolution)
        t4 = time.perf_counter_ns()
        if i < 200:  # warm-up: regex compilation, caches
            continue
        stages["validate"].append((t1 - t0) / 1e6)
        stages["redact"].append((t2 - t1) / 1e6)
        stages["resolve"].append((t3 - t2) / 1e6)
        stages["prompt"].append((t4 - t3) / 1e6)
        stages["validate+resolve"].append((t1 - t0 + t3 - t2) / 1e6)
        stages["all four"].append((t4 - t0) / 1e6)

    print(f"context: {size} bytes canonical UTF-8, {len(MESSAGES)} messages rotated, {args.iterations} iterations")
    print(f"python {platform.python_version()} on {platform.machine()}")
    print()
    print("| stage | p50 ms | p95 ms | p99 ms | mean ms |")
    print("|---|---:|---:|---:|---:|")
    for name, values in stages.items():
        print(
            f"| {name} | {statistics.median(values):.3f} | {percentile(values, 0.95):.3f} | "
            f"{percentile(values, 0.99):.3f} | {statistics.fmean(values):.3f} |"
        )
    p50 = statistics.median(stages["validate+resolve"])
    print()
    print(f"target p50(validate+resolve) <= 1 ms: {'PASS' if p50 <= 1.0 else 'FAIL'} ({p50:.3f} ms)")


if __name__ == "__main__":
    main()
