"""Retrieval metrics over a labeled query file (pure: takes a route function).

File format: a JSON list of ``{"query": str, "expected": [ID, ...], "lang"?: str,
"type"?: str, "context"?: {focus, parentIds, page}}``; ``expected: []`` marks
an out-of-domain question.

- hit@1: the best-scored delivered entry (any shape) is expected;
- recall in full: expected entries delivered in the best shape their kind
  allows (full body; procedures by name, as they never arrive in full),
  micro-averaged over expected entries;
- recall in full or listed: expected entries delivered in any shape;
- negative precision: out-of-domain questions that got nothing in full.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .shaping import RouteResult


@dataclass
class Evaluation:
    queries: int = 0
    positives: int = 0
    negatives: int = 0
    hits_at_1: int = 0
    expected: int = 0
    found_full: int = 0
    found_any: int = 0
    negatives_clean: int = 0
    full_delivered: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    by_type: dict[str, list[int]] = field(default_factory=dict)

    @property
    def hit_at_1(self) -> float:
        return self.hits_at_1 / self.positives if self.positives else 0.0

    @property
    def recall_full(self) -> float:
        return self.found_full / self.expected if self.expected else 0.0

    @property
    def recall_full_or_listed(self) -> float:
        return self.found_any / self.expected if self.expected else 0.0

    @property
    def negative_precision(self) -> float:
        return self.negatives_clean / self.negatives if self.negatives else 1.0

    @property
    def mean_full(self) -> float:
        return self.full_delivered / self.positives if self.positives else 0.0

    def summary(self) -> dict[str, float | int]:
        return {
            "queries": self.queries,
            "hit@1": round(self.hit_at_1, 3),
            "recall_full": round(self.recall_full, 3),
            "recall_full_or_listed": round(self.recall_full_or_listed, 3),
            "negative_precision": round(self.negative_precision, 3),
            "mean_full_per_query": round(self.mean_full, 2),
        }


def load_queries(path: str | Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("queries", [])
    if not isinstance(data, list):
        raise ValueError("a query file is a JSON list of {query, expected}")
    for i, row in enumerate(data):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("query"), str)
            or not isinstance(row.get("expected"), list)
        ):
            raise ValueError(f"query #{i}: needs a 'query' string and an 'expected' list")
    return data


def evaluate(queries: list[dict[str, Any]], route: Callable[[dict[str, Any]], RouteResult]) -> Evaluation:
    ev = Evaluation()
    for row in queries:
        result = route(row)
        expected = list(row["expected"])
        ev.queries += 1
        best_shape = set(result.best_shape_ids())
        delivered = set(result.delivered_ids)
        ranked = [d.id for d in result.ranked()]
        kind = row.get("type", "other")
        if not expected:
            ev.negatives += 1
            clean = not result.full_ids
            ev.negatives_clean += clean
            ev.by_type.setdefault(kind, [0, 0])
            ev.by_type[kind][0] += clean
            ev.by_type[kind][1] += 1
            if not clean:
                ev.failures.append({"query": row["query"], "expected": [], "full": result.full_ids})
            continue
        ev.positives += 1
        ev.expected += len(expected)
        hit = bool(ranked) and ranked[0] in expected
        ev.hits_at_1 += hit
        full = sum(e in best_shape for e in expected)
        ev.found_full += full
        ev.found_any += sum(e in delivered for e in expected)
        ev.full_delivered += len(result.full_ids)
        ok = hit and full == len(expected)
        ev.by_type.setdefault(kind, [0, 0])
        ev.by_type[kind][0] += ok
        ev.by_type[kind][1] += 1
        if not ok:
            ev.failures.append(
                {"query": row["query"], "expected": expected, "full": result.full_ids, "ranked": ranked[:5]}
            )
    return ev
