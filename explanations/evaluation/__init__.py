"""Held-out evaluation of the narrative check (labeled cases, dev/test split).

Pure: a case's `result` is a POST /api/v1/results payload; it is turned into
`ResultFacts` the way the API stores it, checked, and the verdict compared
with the label. Tune on dev.json only; test.json is for reporting.
"""

from __future__ import annotations

import json
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from explanations.numbers import check_narrative
from explanations.prompts import ResultFacts, citable_numbers, result_meaning

HERE = Path(__file__).resolve().parent
DEV = HERE / "dev.json"
TEST = HERE / "test.json"


def facts_from_payload(payload: dict) -> ResultFacts:
    rule = payload.get("rule") or {}
    stored = SimpleNamespace(
        verdict=payload.get("verdict", ""),
        totals=payload.get("totals") or {},
        breakdowns=payload.get("breakdowns") or {},
        budget=None if payload.get("budget") is None else Decimal(str(payload["budget"])),
        target=None if payload.get("target") is None else Decimal(str(payload["target"])),
        period=payload.get("period") or "",
        rule_core=rule.get("core", ""),
        rule_specifics=rule.get("specifics", ""),
        rule_numbers=rule.get("numbers", []),
        units=payload.get("units") or {},
        pii_keys=payload.get("pii_keys") or [],
        counts=payload.get("counts") or {},
        labels=payload.get("labels") or {},
        rounding=payload.get("rounding") or "exact",
    )
    return ResultFacts.from_result(stored)


def verdict(case: dict):
    facts = facts_from_payload(case["result"])
    check = check_narrative(
        unicodedata.normalize("NFC", case["narrative"]),
        citable_numbers(facts),
        rounding=facts.rounding,
        meaning=result_meaning(facts),
    )
    return ("verified" if check.passed else "rejected"), check


@dataclass
class Report:
    total: int = 0
    agreed: int = 0
    by_category: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))  # category -> [agreed, total]
    false_passes: dict = field(default_factory=lambda: defaultdict(int))  # category -> verified but labeled rejected
    false_rejects: dict = field(default_factory=lambda: defaultdict(int))
    misses: list = field(default_factory=list)  # ids of disagreements

    def rate(self, category: str | None = None) -> float:
        agreed, total = (self.agreed, self.total) if category is None else self.by_category[category]
        return agreed / total if total else 0.0


def evaluate(cases: list[dict]) -> Report:
    report = Report()
    for case in cases:
        got, _ = verdict(case)
        ok = got == case["expected"]
        report.total += 1
        report.agreed += ok
        cell = report.by_category[case["category"]]
        cell[0] += ok
        cell[1] += 1
        if not ok:
            report.misses.append(case["id"])
            if got == "verified":
                report.false_passes[case["category"]] += 1
            else:
                report.false_rejects[case["category"]] += 1
    return report


def load(path: Path | str) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
