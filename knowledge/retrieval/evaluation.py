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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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


# ------------------------------------------------------ per-kind report


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion (sound for small n and for 0 or n successes)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class QuestionOutcome:
    query: str
    kind: str
    lang: str
    group: str
    expected: list[str]
    hit: bool  # answerable: best-ranked delivered entry expected; out of domain: nothing in full
    usable: bool  # every expected entry in usable form (knowledge/rule full, procedure named first)
    anywhere: bool  # every expected entry delivered in some shape
    full: list[str]
    ranked: list[str]

    @property
    def ood(self) -> bool:
        return not self.expected

    @property
    def unexpected_full(self) -> int:
        """Full bodies the question did not ask for (for an out-of-domain question, every one)."""
        return sum(1 for i in self.full if i not in self.expected)


def judge(row: dict[str, Any], result: RouteResult, kinds: Mapping[str, str]) -> QuestionOutcome:
    """One question's verdicts. ``kinds`` maps package ID → knowledge | rule | procedure."""
    expected = list(row["expected"])
    ranked = [d.id for d in result.ranked()]
    full = set(result.full_ids)
    procedures = [p.id for p in result.procedures]
    delivered = set(result.delivered_ids)
    if not expected:
        clean = not result.full_ids
        hit = usable = anywhere = clean
    else:
        hit = bool(ranked) and ranked[0] in expected
        usable = True
        for e in expected:
            if kinds.get(e) == "procedure":
                # Named first among the procedures the turn is offered (their bodies come with ::ID).
                others = [p for p in procedures if p not in expected]
                usable &= e in procedures and (not others or procedures.index(e) < procedures.index(others[0]))
            else:
                usable &= e in full
        anywhere = all(e in delivered for e in expected)
    return QuestionOutcome(
        query=row["query"],
        kind=str(row.get("type", "other")),
        lang=str(row.get("lang", "")),
        group=str(row.get("group", "")),
        expected=expected,
        hit=hit,
        usable=usable,
        anywhere=anywhere,
        full=result.full_ids,
        ranked=ranked[:5],
    )


@dataclass
class Report:
    outcomes: list[QuestionOutcome]

    def _rate(self, rows: list[QuestionOutcome], attr: str) -> dict[str, Any]:
        n = len(rows)
        ok = sum(bool(getattr(r, attr)) for r in rows)
        lo, hi = wilson(ok, n)
        return {"ok": ok, "n": n, "rate": round(ok / n, 3) if n else None, "ci95": [round(lo, 3), round(hi, 3)]}

    @staticmethod
    def _bodies(rows: list[QuestionOutcome]) -> dict[str, Any]:
        """Full bodies nobody asked for: their number, per question, and their share of all full bodies.

        hit@1 and usable look at the expected entries only, so a change that gives every question
        more bodies raises usable for free; this is what it costs the agent's context.
        """
        full = sum(len(r.full) for r in rows)
        unexpected = sum(r.unexpected_full for r in rows)
        return {
            "n": unexpected,
            "full": full,
            "per_question": round(unexpected / len(rows), 3) if rows else None,
            "share": round(unexpected / full, 3) if full else None,
        }

    @property
    def answerable(self) -> list[QuestionOutcome]:
        return [o for o in self.outcomes if not o.ood]

    def kinds(self) -> list[str]:
        return sorted({o.kind for o in self.outcomes})

    def by_kind(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for kind in [*self.kinds(), "all"]:
            rows = self.outcomes if kind == "all" else [o for o in self.outcomes if o.kind == kind]
            pos = [o for o in rows if not o.ood]
            neg = [o for o in rows if o.ood]
            entry: dict[str, Any] = {"questions": len(rows)}
            if pos:
                entry["hit@1"] = self._rate(pos, "hit")
                entry["usable"] = self._rate(pos, "usable")
                entry["anywhere"] = self._rate(pos, "anywhere")
            if neg:
                entry["ood_precision"] = self._rate(neg, "hit")
            entry["unexpected_full"] = self._bodies(rows)
            out[kind] = entry
        return out

    def parity(self, metric: str = "usable", resamples: int = 2000, seed: int = 12) -> dict[str, Any]:
        """en and es score ÷ pt score over the groups asked in both, with a bootstrap 95 % interval over groups.

        Out-of-domain questions count too (their score is "nothing in full"), so
        a language that answers everything wrongly in full is not at parity.
        """
        attr = {"usable": "usable", "hit@1": "hit"}[metric]
        by_group: dict[str, dict[str, bool]] = {}
        for o in self.outcomes:
            if o.group and o.lang:
                by_group.setdefault(o.group, {})[o.lang] = bool(getattr(o, attr))
        out: dict[str, Any] = {}
        rng = np.random.default_rng(seed)
        for lang in ("en", "es"):
            groups = [g for g, langs in by_group.items() if "pt" in langs and lang in langs]
            if not groups:
                continue
            pt = np.asarray([by_group[g]["pt"] for g in groups], dtype=float)
            other = np.asarray([by_group[g][lang] for g in groups], dtype=float)
            ratio = other.sum() / pt.sum() if pt.sum() else None
            samples = []
            for _ in range(resamples):
                pick = rng.integers(0, len(groups), len(groups))
                denom = pt[pick].sum()
                if denom:
                    samples.append(other[pick].sum() / denom)
            ci = [round(float(np.percentile(samples, 2.5)), 3), round(float(np.percentile(samples, 97.5)), 3)]
            out[lang] = {
                "groups": len(groups),
                "ratio": round(float(ratio), 3) if ratio is not None else None,
                "ci95": ci if samples else None,
                lang: int(other.sum()),
                "pt": int(pt.sum()),
            }
        return out

    def summary(self) -> dict[str, Any]:
        return {"by_kind": self.by_kind(), "parity": self.parity(), "parity_hit@1": self.parity("hit@1")}


def evaluate_report(
    queries: list[dict[str, Any]], route: Callable[[dict[str, Any]], RouteResult], kinds: Mapping[str, str]
) -> Report:
    return Report([judge(row, route(row), kinds) for row in queries])


def format_report(report: Report) -> list[str]:
    """Plain-text table for curators: per question kind, rates with their 95 % intervals."""

    def cell(value: dict[str, Any] | None) -> str:
        if not value:
            return f"{'—':>20}"
        lo, hi = value["ci95"]
        return f"{value['rate']:.2f} [{lo:.2f}–{hi:.2f}] {value['ok']:>3}/{value['n']:<3}"[:28].rjust(28)

    def bodies(value: dict[str, Any]) -> str:
        return f"{value['per_question']:.2f} ({value['n']}/{value['full']})".rjust(22)

    lines = [
        f"{'kind':<14}{'n':>4}  {'hit@1':>28}{'usable':>28}{'anywhere':>28}{'out-of-domain precision':>28}"
        f"{'unexpected full / q':>22}"
    ]
    for kind, entry in report.by_kind().items():
        lines.append(
            f"{kind:<14}{entry['questions']:>4}  {cell(entry.get('hit@1'))}{cell(entry.get('usable'))}"
            f"{cell(entry.get('anywhere'))}{cell(entry.get('ood_precision'))}{bodies(entry['unexpected_full'])}"
        )
    for metric in ("usable", "hit@1"):
        for lang, p in report.parity(metric).items():
            ci = p["ci95"] or [0, 0]
            ratio = "n/a" if p["ratio"] is None else f"{p['ratio']:.2f}"
            lines.append(
                f"parity {lang} ÷ pt ({metric}): {ratio} [{ci[0]:.2f}–{ci[1]:.2f}] "
                f"({p[lang]} vs {p['pt']} over {p['groups']} groups)"
            )
    return lines
