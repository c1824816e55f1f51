"""Delivery shaping: which entries arrive as full bodies, which listed, which by name.

Over all parts of a message: strict relevant rules always in full; each part's
best eligible entries in full, round-robin across parts so every part's best
arrives, within the token budget and ``max_full`` per part; procedures by name
only; every other relevant entry listed (id, title, one line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .entries import KIND_PROCEDURE, KIND_RULE

if TYPE_CHECKING:
    from .index import RouterIndex
    from .signals import PartOutcome


@dataclass
class Delivered:
    id: str
    title: str
    summary: str
    kind: str
    strict: bool
    revision: int
    shape: str  # "full" | "listed" | "name"
    score: float
    why: list[dict[str, Any]]
    body: str | None = None
    tokens: int = 0

    def as_full(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "revision": self.revision,
            "body": self.body,
            "score": round(self.score, 4),
            "why": self.why,
        }

    def as_listed(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summary": self.summary, "why": self.why}

    def as_procedure(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summary": self.summary}

    def as_rule(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "strict": self.strict,
            "shape": self.shape,
            "revision": self.revision,
            "score": round(self.score, 4),
            "why": self.why,
        }
        if self.shape == "full":
            out["body"] = self.body
        return out


@dataclass
class RouteResult:
    catalog_version: int
    parts: list[str]
    full: list[Delivered]
    listed: list[Delivered]
    procedures: list[Delivered]
    rules: list[Delivered]
    timings_ms: dict[str, float]
    cascade: list[bool]
    part_keys: list[str]
    budget_tokens: int
    used_tokens: int
    # Per part, the best entries before fetch feedback: what the router itself thought
    # the question was about (fetch feedback compares questions by it).
    part_rankings: list[list[str]] = field(default_factory=list)

    @property
    def full_ids(self) -> list[str]:
        return [d.id for d in self.full] + [r.id for r in self.rules if r.shape == "full"]

    @property
    def listed_ids(self) -> list[str]:
        return [d.id for d in self.listed] + [r.id for r in self.rules if r.shape != "full"]

    @property
    def delivered_ids(self) -> list[str]:
        return self.full_ids + self.listed_ids + [p.id for p in self.procedures]

    def ranked(self) -> list[Delivered]:
        """Every delivered entry, whatever its shape, best fused score first."""
        everything = [*self.full, *self.listed, *self.procedures, *self.rules]
        return sorted(everything, key=lambda d: -d.score)

    def best_shape_ids(self) -> list[str]:
        """Entries delivered in the best shape their kind allows: full, or by name for procedures."""
        return self.full_ids + [p.id for p in self.procedures]

    def as_dict(self) -> dict[str, Any]:
        return {
            "catalog_version": self.catalog_version,
            "parts": self.parts,
            "full": [d.as_full() for d in self.full],
            "listed": [d.as_listed() for d in self.listed],
            "procedures": [d.as_procedure() for d in self.procedures],
            "rules": [d.as_rule() for d in self.rules],
            "timings_ms": self.timings_ms,
        }


def full_queue(index: RouterIndex, outcome: PartOutcome) -> list[int]:
    """A part's candidates for a full body, in order: fetched-after-listed first, then fused score.

    Besides passing the relevance threshold, a candidate must fuse to at
    least ``full_relative_fused`` of the part's best: the full shape is for
    the few best matches, and a body that merely shares common words with
    the question (more likely in the catalog's own language) is listed.
    """
    promoted = {i for i, notes in outcome.why.items() if any(n["signal"] == "feedback" for n in notes)}
    candidates = [i for i in outcome.eligible if index.entries[i].kind != KIND_PROCEDURE]
    if not candidates:
        return []
    best = max(outcome.fused.get(i, 0.0) for i in candidates)
    gate = index.config.full_relative_fused * best
    kept = [i for i in candidates if i in promoted or outcome.fused.get(i, 0.0) >= gate]
    return sorted(kept, key=lambda i: (i not in promoted, -outcome.fused.get(i, 0.0), i))


@dataclass
class _Budget:
    limit: int
    used: int = 0


def _merge_parts(outcomes: list[PartOutcome]) -> tuple[dict[int, float], dict[int, list[dict[str, Any]]]]:
    """Each entry's best fused score over the parts, and its reasons (tagged with the part when several)."""
    best_score: dict[int, float] = {}
    why: dict[int, list[dict[str, Any]]] = {}
    several = len(outcomes) > 1
    for p, o in enumerate(outcomes):
        for i, s in o.fused.items():
            best_score[i] = max(best_score.get(i, 0.0), s)
        for i, notes in o.why.items():
            why.setdefault(i, []).extend(({**n, "part": p} for n in notes) if several else notes)
    return best_score, why


def _fill_full(
    index: RouterIndex, outcomes: list[PartOutcome], relevant: list[int], budget: _Budget, per_part_max: int
) -> tuple[list[int], set[int]]:
    """Each part's best, then strict rules, then each part's next best in turn; returns (full, over budget)."""
    full_set: list[int] = []
    over_budget: set[int] = set()
    queues = [full_queue(index, o) for o in outcomes]
    taken = [0] * len(outcomes)

    def take(p: int) -> bool:
        """The part's next candidate that fits the budget, if any."""
        queue = queues[p]
        while queue and taken[p] < per_part_max:
            i = queue.pop(0)
            if i in full_set:
                continue
            cost = index.body_tokens(i)
            if budget.used + cost > budget.limit:
                over_budget.add(i)
                continue
            full_set.append(i)
            budget.used += cost
            taken[p] += 1
            return True
        return False

    # Each part's best answer is placed first, so a guardrail never pushes it out of the budget.
    for p in range(len(outcomes)):
        take(p)
    # Strict rules keep their body (also past the budget) when they passed the same relevance
    # test as a full answer in some part: a rule reached only through a wiki-link hop or a weak
    # listed match is not a guardrail for this question.
    passed = {i for o in outcomes for i in o.eligible}
    for i in relevant:
        e = index.entries[i]
        if e.kind == KIND_RULE and e.strict and i in passed and i not in full_set:
            full_set.append(i)
            budget.used += index.body_tokens(i)
    # Round-robin over parts for the rest.
    progress = True
    while progress:
        progress = False
        for p in range(len(queues)):
            progress = take(p) or progress
    return full_set, over_budget


def shape(
    index: RouterIndex, outcomes: list[PartOutcome], *, budget_tokens: int | None, max_full: int | None
) -> RouteResult:
    cfg = index.config
    n_parts = max(len(outcomes), 1)
    per_part_budget = cfg.budget_tokens if budget_tokens is None else budget_tokens
    per_part_max = cfg.max_full_per_part if max_full is None else max_full
    budget = _Budget(int(per_part_budget * (1 + cfg.extra_part_budget * (n_parts - 1))))
    best_score, why = _merge_parts(outcomes)

    def make(i: int, shape: str) -> Delivered:
        e = index.entries[i]
        body = e.body if shape == "full" else None
        return Delivered(
            id=e.package_id,
            title=e.title,
            summary=e.summary,
            kind=e.kind,
            strict=bool(e.strict),
            revision=e.revision,
            shape=shape,
            score=best_score.get(i, 0.0),
            why=why.get(i, []),
            body=body,
            tokens=index.body_tokens(i) if body else 0,
        )

    relevant = sorted(best_score, key=lambda i: (-best_score[i], i))
    full_set, over_budget = _fill_full(index, outcomes, relevant, budget, per_part_max)

    full: list[Delivered] = []
    listed: list[Delivered] = []
    procedures: list[Delivered] = []
    rules: list[Delivered] = []
    for i in sorted(full_set, key=lambda i: (-best_score.get(i, 0.0), i)):
        (rules if index.entries[i].kind == KIND_RULE else full).append(make(i, "full"))
    for i in relevant:
        if i in full_set:
            continue
        e = index.entries[i]
        if e.kind == KIND_PROCEDURE:
            procedures.append(make(i, "name"))
            continue
        d = make(i, "listed")
        if i in over_budget:
            d.why = [*d.why, {"signal": "budget", "rank": 0, "detail": "over the token budget: listed"}]
        (rules if e.kind == KIND_RULE else listed).append(d)
    return RouteResult(
        catalog_version=index.version,
        parts=[o.text for o in outcomes],
        full=full,
        listed=listed,
        procedures=procedures,
        rules=rules,
        timings_ms={},
        cascade=[o.cascade for o in outcomes],
        part_keys=[o.key for o in outcomes],
        part_rankings=[o.base_ranking for o in outcomes],
        budget_tokens=budget.limit,
        used_tokens=budget.used,
    )
