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

from explanations.entities import result_meaning
from explanations.numbers import check_narrative
from explanations.prompts import ResultFacts, citable_numbers

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
    # Rejected cases the checker also rejected: how many name the expected numbers
    # (each expected text overlaps a reported unmatched span, as the writer's README suggests).
    spans_checked: int = 0
    spans_agreed: int = 0

    def rate(self, category: str | None = None) -> float:
        agreed, total = (self.agreed, self.total) if category is None else self.by_category[category]
        return agreed / total if total else 0.0


def evaluate(cases: list[dict]) -> Report:
    report = Report()
    for case in cases:
        got, check = verdict(case)
        ok = got == case["expected"]
        report.total += 1
        report.agreed += ok
        cell = report.by_category[case["category"]]
        cell[0] += ok
        cell[1] += 1
        if ok and got == "rejected" and case.get("expected_unmatched"):
            report.spans_checked += 1
            report.spans_agreed += _spans_agree(case, check)
        if not ok:
            report.misses.append(case["id"])
            if got == "verified":
                report.false_passes[case["category"]] += 1
            else:
                report.false_rejects[case["category"]] += 1
    return report


def _spans_agree(case: dict, check) -> bool:
    narrative = unicodedata.normalize("NFC", case["narrative"])
    reported = [(n.start, n.end) for n in check.unmatched]
    for text in case["expected_unmatched"]:
        start = narrative.find(unicodedata.normalize("NFC", text))
        if start < 0 or not any(a < start + len(text) and start < b for a, b in reported):
            return False
    return True


def load(path: Path | str) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))
