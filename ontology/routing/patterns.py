"""Deterministic query-pattern classifier (seed 002, the six ontological patterns).

Each pattern in data/patterns.yaml carries weighted regular-expression cues in pt, en
and es. A pattern's score is the noisy-or of its matched cue weights, so several
independent cues reinforce each other without passing 1.0. The confidence of the best
pattern is its score discounted by how close the runner-up is:

    confidence = top · (1 − second / (2 · top))

so a clear winner keeps its score and an exact tie keeps only half of it. Below
``min_confidence`` the router falls back to ``default_pattern`` (recorded as such).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .data import patterns_file
from .text import normalize


@dataclass(frozen=True)
class PatternMatch:
    pattern: str
    confidence: float
    scores: dict[str, float] = field(default_factory=dict)
    fallback: bool = False
    cues: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {
            "pattern": self.pattern,
            "confidence": self.confidence,
            "scores": self.scores,
            "fallback": self.fallback,
        }


@lru_cache(maxsize=1)
def _compiled() -> tuple[tuple[str, tuple[tuple[re.Pattern, float], ...]], ...]:
    out = []
    for pattern_id, spec in patterns_file()["patterns"].items():
        out.append((pattern_id, tuple((re.compile(c["re"]), float(c["w"])) for c in spec["cues"])))
    return tuple(out)


def pattern_ids() -> tuple[str, ...]:
    return tuple(patterns_file()["patterns"])


def classify(message: str) -> PatternMatch:
    text = normalize(message)
    scores: dict[str, float] = {}
    matched: list[str] = []
    for pattern_id, cues in _compiled():
        miss = 1.0
        for rx, weight in cues:
            if rx.search(text):
                miss *= 1.0 - weight
                matched.append(f"{pattern_id}:{rx.pattern[:40]}")
        scores[pattern_id] = round(1.0 - miss, 4)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], pattern_ids().index(kv[0])))
    (top_id, top), (_, second) = ranked[0], ranked[1]
    confidence = round(top * (1.0 - second / (2.0 * top)), 2) if top > 0 else 0.0
    cfg = patterns_file()
    if confidence < float(cfg["min_confidence"]):
        return PatternMatch(cfg["default_pattern"], confidence, scores, fallback=True, cues=tuple(matched))
    return PatternMatch(top_id, confidence, scores, fallback=False, cues=tuple(matched))
