"""Delivery shaping: which entries arrive as full bodies, which listed, which by name.

Over all parts of a message: strict relevant rules always in full; each part's
best eligible entries in full, round-robin across parts so every part's best
arrives, within the token budget and ``max_full`` per part; procedures by name
only; every other relevant entry listed (id, title, one line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .entries import KIND_PROCEDURE, KIND_RULE
from .fusion import rrf_steps
from .signals import LEXICAL_SIGNALS, Note, note_as_dict

if TYPE_CHECKING:
    from .index import RouterIndex
    from .signals import PartOutcome


@dataclass(slots=True)
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


# What shaping decides for one entry, before anyone asks for a Delivered:
# (head, shape, score, reasons, body, tokens), head = (id, title, summary, kind, strict, revision).
# Plain data (no reference to the index), so a result pickles as it is.
Row = tuple


def _delivered(row: Row) -> Delivered:
    head, shape, score, notes, body, tokens = row
    return Delivered(*head, shape, score, [note_as_dict(n) for n in notes], body, tokens)


@dataclass
class RouteResult:
    """A route's delivery. The entry lists (``full``, ``listed``, ``procedures``, ``rules``) are
    built from compact rows on first access: a turn reads only ids, and a route lists ~50
    entries whose reasons only the API and the admin format."""

    catalog_version: int
    parts: list[str]
    full_rows: list[Row]
    listed_rows: list[Row]
    procedure_rows: list[Row]
    rule_rows: list[Row]
    timings_ms: dict[str, float]
    cascade: list[bool]
    part_keys: list[str]
    budget_tokens: int
    used_tokens: int
    # Per part, the best entries before fetch feedback: what the router itself thought
    # the question was about (fetch feedback compares questions by it).
    part_rankings: list[list[str]] = field(default_factory=list)
    _built: dict[str, list[Delivered]] = field(default_factory=dict, repr=False, compare=False)

    def _group(self, name: str, rows: list[Row]) -> list[Delivered]:
        built = self._built.get(name)
        if built is None:
            built = self._built[name] = [_delivered(r) for r in rows]
        return built

    @property
    def full(self) -> list[Delivered]:
        return self._group("full", self.full_rows)

    @property
    def listed(self) -> list[Delivered]:
        return self._group("listed", self.listed_rows)

    @property
    def procedures(self) -> list[Delivered]:
        return self._group("procedures", self.procedure_rows)

    @property
    def rules(self) -> list[Delivered]:
        return self._group("rules", self.rule_rows)

    def __getstate__(self) -> dict[str, Any]:
        # Cached pickled: the rows are the result; the built objects are rebuilt on demand.
        return {**self.__dict__, "_built": {}}

    @property
    def full_ids(self) -> list[str]:
        return [r[0][0] for r in self.full_rows] + [r[0][0] for r in self.rule_rows if r[1] == "full"]

    @property
    def listed_ids(self) -> list[str]:
        return [r[0][0] for r in self.listed_rows] + [r[0][0] for r in self.rule_rows if r[1] != "full"]

    @property
    def procedure_ids(self) -> list[str]:
        return [r[0][0] for r in self.procedure_rows]

    @property
    def delivered_ids(self) -> list[str]:
        return self.full_ids + self.listed_ids + self.procedure_ids

    def ranked(self) -> list[Delivered]:
        """Every delivered entry, whatever its shape, best fused score first."""
        everything = [*self.full, *self.listed, *self.procedures, *self.rules]
        return sorted(everything, key=lambda d: -d.score)

    def best_shape_ids(self) -> list[str]:
        """Entries delivered in the best shape their kind allows: full, or by name for procedures."""
        return self.full_ids + self.procedure_ids

    def as_dict(self) -> dict[str, Any]:
        # Listed entries and procedures straight from their rows (no Delivered in between):
        # they are most of a route, and the API is what shows them.
        listed = self._built.get("listed")
        procedures = self._built.get("procedures")
        return {
            "catalog_version": self.catalog_version,
            "parts": self.parts,
            "full": [d.as_full() for d in self.full],
            "listed": [d.as_listed() for d in listed]
            if listed is not None
            else [
                {"id": h[0], "title": h[1], "summary": h[2], "why": [note_as_dict(n) for n in notes]}
                for h, _, _, notes, _, _ in self.listed_rows
            ],
            "procedures": [d.as_procedure() for d in procedures]
            if procedures is not None
            else [{"id": h[0], "title": h[1], "summary": h[2]} for h, *_ in self.procedure_rows],
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
    promoted = outcome.promoted
    entries = index.entries
    candidates = [i for i in outcome.eligible if entries[i].kind != KIND_PROCEDURE]
    if not candidates:
        return []
    fused_get = outcome.fused.get
    scores = [fused_get(i, 0.0) for i in candidates]
    gate = index.config.full_relative_fused * max(scores)
    if promoted:
        kept = [i for i, s in zip(candidates, scores) if i in promoted or s >= gate]
        return sorted(kept, key=lambda i: (i not in promoted, -fused_get(i, 0.0), i))
    kept_scores = {i: s for i, s in zip(candidates, scores) if s >= gate}
    return _best_first(kept_scores, outcome.meaning)


def _best_first(scores: dict[int, float], meaning: np.ndarray | None) -> list[int]:
    """Entries by score, best first; a tie goes to the entry closer in meaning to the question (when
    it was embedded), then to catalog position. Fused scores are sums of rank shares, so two entries
    first in different signals of equal weight tie exactly."""
    if meaning is None or len(scores) < 2:
        # (-score, position) without a tuple per entry: positions sorted, then stably by score.
        return sorted(sorted(scores), key=scores.__getitem__, reverse=True)
    return sorted(scores, key=lambda i: (-scores[i], -meaning[i], i))


def _meaning(outcomes: list[PartOutcome]) -> np.ndarray | None:
    """Each entry's closest cosine over the message's embedded parts (None when none was embedded)."""
    arrays = [o.meaning for o in outcomes if o.meaning is not None]
    if not arrays:
        return None
    if len(arrays) == 1:
        return arrays[0]
    return np.maximum.reduce(arrays)


def _add_message_ranking(cfg, ranking: list[tuple[int, float, float]], best_score: dict[int, float], why) -> None:
    """The whole message's closest entries, each its rank's share (weight ``message``) added to its best
    score over the parts, and the closest one's first-rank share once more (weight ``message_top``):
    rank only, never a full body (index.message_meaning). ``best_score`` and ``why`` are the merge's own
    (several parts), so nothing of a part's outcome changes."""
    for r, ((i, sim, _lift), step) in enumerate(
        zip(ranking, rrf_steps(cfg.weights["message"], cfg.rrf_k, len(ranking))), 1
    ):
        best_score[i] = best_score.get(i, 0.0) + step
        note = ("message", r, f"the whole message's similarity {sim:.3f}")
        known = why.get(i)
        if known is None:
            why[i] = [note]
        else:
            known.append(note)
    top_weight = cfg.weights.get("message_top", 0.0)
    if top_weight:
        top = ranking[0][0]
        best_score[top] += top_weight / (cfg.rrf_k + 1)
        why[top].append(("message_top", 1, "the closest entry to the whole message: ranked once more"))


def _message_floor(index: RouterIndex, outcomes: list[PartOutcome], ranking) -> None:
    """When the whole message's closest entry stands less than ``message_lift_floor`` above the catalog's
    mean cosine (``message_lift_floor_examples`` for an entry with example questions, whose cosines run
    otherwise) its meaning points at no entry, and the parts' keyword and BM25 full bodies are listed: a
    word of a short part ("sábado" in "¿Va a llover el fin de semana? Quería hacer un asado el sábado.")
    is not a reason to hand its entry over. An entry fetch feedback promoted keeps its body (an ID or
    the UI context hold theirs anyway: they make it eligible in every part, and a part they answer alone
    leaves the message unembedded)."""
    if not ranking or len(outcomes) < 2:
        return
    top, _sim, lift = ranking[0]
    cfg = index.config
    floor = cfg.message_lift_floor_examples if index.dense.has_examples(top) else cfg.message_lift_floor
    if lift >= floor:
        return
    note = ("message_floor", 0, f"the whole message's meaning points at no entry (lift {lift:.3f})")
    _list_bodies(outcomes, note, lambda o, i: any(n[0] in LEXICAL_SIGNALS for n in o.why.get(i, ())))


def _list_bodies(outcomes: list[PartOutcome], note: Note, taken) -> None:
    """Every part's entries eligible for a full body that ``taken(outcome, entry)`` selects are listed
    instead, with ``note``; an entry fetch feedback promoted keeps its body."""
    for o in outcomes:
        for i in sorted(o.eligible):
            if i in o.promoted or not taken(o, i):
                continue
            o.eligible.discard(i)
            o.why.setdefault(i, []).append(note)


def _background(outcomes: list[PartOutcome], verdict: tuple[float, float, str]) -> None:
    """The message is closer to a question no entry answers (a general question about everyday life, or
    one of the catalog's out-of-scope questions) than to any entry (index.background_verdict): nothing is
    eligible for a full body, so what was found is listed (the model can still fetch it). An entry fetch
    feedback promoted keeps its body: a user fetched it after a question like this one."""
    closest, best, reason = verdict
    what = "a general question" if reason == "background" else "a question the catalog does not answer"
    note = (reason, 0, f"closer to {what} ({closest:.3f}) than to any entry ({best:.3f}): listed")
    _list_bodies(outcomes, note, lambda o, i: True)


def _settle_eligible(index: RouterIndex, outcomes: list[PartOutcome], message_ranking, background) -> None:
    """The message-wide rules on the parts' full-body candidates: none when the message is closer to the
    background than to any entry, else the whole message's floor, then words and meaning agreeing."""
    if background is not None:
        _background(outcomes, background)
        return
    _message_floor(index, outcomes, message_ranking)
    _agreed_full(index, outcomes)


def _message_full(index: RouterIndex, outcomes: list[PartOutcome], ranking, relevant: list[int], why) -> int | None:
    """The whole message's closest entry, when it is also first in the merged ranking and stands at least
    ``message_full_lift`` above the catalog's mean cosine (``message_full_lift_examples`` for an entry with
    example questions; never a procedure): the message's own answer,
    which no part alone may have made eligible (a context sentence and a bare "what do I do?")."""
    cfg = index.config
    if not ranking or not relevant or len(outcomes) < 2:
        return None
    top, _sim, lift = ranking[0]
    floor = cfg.message_full_lift_examples if index.dense.has_examples(top) else cfg.message_full_lift
    if top != relevant[0] or lift < floor or index.entries[top].kind == KIND_PROCEDURE:
        return None
    why[top].append(("message_full", 1, f"first, and the whole message's closest entry (lift {lift:.3f})"))
    return top


@dataclass
class _Budget:
    limit: int
    used: int = 0


def _merge_parts(outcomes: list[PartOutcome]) -> tuple[dict[int, float], dict[int, list[Note]]]:
    """Each entry's best fused score over the parts, and its reasons (tagged with the part when several)."""
    if len(outcomes) == 1:
        # One part: its scores and reasons as they are (nothing mutates them after shaping).
        o = outcomes[0]
        if not o.fused or min(o.fused.values()) > 0.0:
            return o.fused, o.why
        return {i: max(0.0, s) for i, s in o.fused.items()}, o.why
    best_score: dict[int, float] = {}
    why: dict[int, list[Note]] = {}
    why_get = why.get
    for p, o in enumerate(outcomes):
        for i, s in o.fused.items():
            best_score[i] = max(best_score.get(i, 0.0), s)
        tag = (p,)
        for i, notes in o.why.items():
            tagged = [n + tag for n in notes]  # (*note, part)
            known = why_get(i)
            if known is None:
                why[i] = tagged
            else:
                known.extend(tagged)
    return best_score, why


def _fill_full(
    index: RouterIndex,
    outcomes: list[PartOutcome],
    relevant: list[int],
    budget: _Budget,
    per_part_max: int,
    message_first: int | None = None,
) -> tuple[list[int], set[int]]:
    """The whole message's own full body (``message_first``) when it fits, each part's best, then strict
    rules, then each part's next best in turn; returns (full, over budget)."""
    full_set: list[int] = []
    over_budget: set[int] = set()
    if message_first is not None:
        cost = index.body_tokens(message_first)
        if cost <= budget.limit:
            full_set.append(message_first)
            budget.used += cost
        else:
            over_budget.add(message_first)
    queues = [full_queue(index, o) for o in outcomes]
    heads = [0] * len(outcomes)  # next position in each queue
    taken = [0] * len(outcomes)
    body_tokens = index.body_tokens

    def take(p: int) -> bool:
        """The part's next candidate that fits the budget, if any."""
        queue = queues[p]
        while heads[p] < len(queue) and taken[p] < per_part_max:
            i = queue[heads[p]]
            heads[p] += 1
            if i in full_set:
                continue
            cost = body_tokens(i)
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
    strict_set = _strict_rules(index)
    strict_rules = {i for o in outcomes for i in o.eligible if i in strict_set}
    if strict_rules:
        for i in relevant:
            if i in strict_rules and i not in full_set:
                full_set.append(i)
                budget.used += body_tokens(i)
    # Round-robin over parts for the rest.
    progress = True
    while progress:
        progress = False
        for p in range(len(queues)):
            progress = take(p) or progress
    return full_set, over_budget


_MULTIPART_NOTE = ("multipart", 1, "its part's best by words and by meaning")
_AGREED_NOTE = ("agreed", 1, "the best by words and by meaning")


def _agreed_full(index: RouterIndex, outcomes: list[PartOutcome]) -> None:
    """Each part's best entry, when words and meaning agree on it, may arrive in full (signals._agreement)."""
    cfg = index.config
    several = len(outcomes) > 1
    floor = cfg.multipart_full_lift if several else cfg.agreed_full_lift
    depth = cfg.multipart_lexical_rank if several else cfg.agreed_lexical_rank
    note = _MULTIPART_NOTE if several else _AGREED_NOTE
    for o in outcomes:
        a = o.agreement
        if a is None or a.entry in o.eligible or not o.fused:
            continue
        if a.lift >= floor and (not depth or 0 < a.lexical_rank <= depth):
            reason = note
        elif a.closest_example is not None and a.closest_example >= cfg.agreed_example_cosine:
            # A message of one part worded like one of the entry's accepted example questions.
            reason = (
                "agreed_example",
                1,
                f"the best by meaning, close to an example question ({a.closest_example:.3f})",
            )
        else:
            continue
        if a.entry == max(o.fused, key=lambda i: (o.fused[i], -i)):
            o.eligible.add(a.entry)
            o.why.setdefault(a.entry, []).append(reason)


def _strict_rules(index: RouterIndex) -> frozenset[int]:
    cached = getattr(index, "_strict_rule_set", None)
    if cached is None:
        cached = index._strict_rule_set = frozenset(index.strict_rules)
    return cached


def _listed_apart(index: RouterIndex) -> frozenset[int]:
    """Positions of the procedures and rules: delivered in rows of their own, not as listed entries."""
    cached = index.__dict__.get("_listed_apart")
    if cached is None:
        cached = index._listed_apart = frozenset(
            i for i, e in enumerate(index.entries) if e.kind == KIND_PROCEDURE or e.kind == KIND_RULE
        )
    return cached


_BUDGET_NOTE = ("budget", 0, "over the token budget: listed")


def _heads(index: RouterIndex) -> list[tuple | None]:
    """Per entry position (filled as entries get delivered): (id, title, summary, kind, strict, revision)."""
    heads = index.__dict__.get("_delivery_heads")
    if heads is None or len(heads) != len(index.entries):
        heads = index._delivery_heads = [None] * len(index.entries)
    return heads


def shape(
    index: RouterIndex,
    outcomes: list[PartOutcome],
    *,
    budget_tokens: int | None,
    max_full: int | None,
    message_ranking: list[tuple[int, float, float]] | None = None,
    background: tuple[float, float, str] | None = None,
) -> RouteResult:
    cfg = index.config
    n_parts = max(len(outcomes), 1)
    per_part_budget = cfg.budget_tokens if budget_tokens is None else budget_tokens
    per_part_max = cfg.max_full_per_part if max_full is None else max_full
    budget = _Budget(int(per_part_budget * (1 + cfg.extra_part_budget * (n_parts - 1))))
    _settle_eligible(index, outcomes, message_ranking, background)
    best_score, why = _merge_parts(outcomes) if outcomes else ({}, {})
    if message_ranking and len(outcomes) > 1:
        _add_message_ranking(cfg, message_ranking, best_score, why)

    entries = index.entries
    heads = _heads(index)
    no_notes: list[Note] = []

    def head(i: int) -> tuple:
        e = entries[i]
        h = heads[i] = (e.package_id, e.title, e.summary, e.kind, bool(e.strict), e.revision)
        return h

    # Best score first; ties by meaning, then position.
    meaning = _meaning(outcomes)
    relevant = _best_first(best_score, meaning)
    message_first = None if background else _message_full(index, outcomes, message_ranking, relevant, why)
    full_set, over_budget = _fill_full(index, outcomes, relevant, budget, per_part_max, message_first)

    full: list[Row] = []
    listed: list[Row] = []
    procedures: list[Row] = []
    rules: list[Row] = []
    if meaning is None:
        full_order = sorted(full_set, key=lambda i: (-best_score.get(i, 0.0), i))
    else:
        rank = {i: r for r, i in enumerate(relevant)}
        full_order = sorted(full_set, key=lambda i: (-best_score.get(i, 0.0), rank.get(i, len(rank)), i))
    for i in full_order:
        h = heads[i] or head(i)
        body = entries[i].body
        row = (h, "full", best_score.get(i, 0.0), why.get(i, no_notes), body, index.body_tokens(i) if body else 0)
        (rules if h[3] == KIND_RULE else full).append(row)
    in_full = set(full_set)
    why_get = why.get
    if over_budget:
        add_listed = listed.append
        for i in relevant:
            if i in in_full:
                continue
            h = heads[i] or head(i)
            kind = h[3]
            notes = why_get(i, no_notes)
            if kind == KIND_PROCEDURE:
                procedures.append((h, "name", best_score[i], notes, None, 0))
                continue
            if i in over_budget:
                notes = [*notes, _BUDGET_NOTE]
            if kind == KIND_RULE:
                rules.append((h, "listed", best_score[i], notes, None, 0))
            else:
                add_listed((h, "listed", best_score[i], notes, None, 0))
    else:
        # Nothing over the budget (the usual case): the plain listed rows in one pass, then the few
        # procedures and rules, each list still in ``relevant`` order.
        apart = _listed_apart(index)
        listed = [
            (heads[i] or head(i), "listed", best_score[i], why_get(i, no_notes), None, 0)
            for i in relevant
            if i not in in_full and i not in apart
        ]
        if not apart.isdisjoint(relevant):
            for i in relevant:
                if i in apart and i not in in_full:
                    h = heads[i] or head(i)
                    if h[3] == KIND_PROCEDURE:
                        procedures.append((h, "name", best_score[i], why_get(i, no_notes), None, 0))
                    else:
                        rules.append((h, "listed", best_score[i], why_get(i, no_notes), None, 0))
    return RouteResult(
        catalog_version=index.version,
        parts=[o.text for o in outcomes],
        full_rows=full,
        listed_rows=listed,
        procedure_rows=procedures,
        rule_rows=rules,
        timings_ms={},
        cascade=[o.cascade for o in outcomes],
        part_keys=[o.key for o in outcomes],
        part_rankings=[o.base_ranking for o in outcomes],
        budget_tokens=budget.limit,
        used_tokens=budget.used,
    )
