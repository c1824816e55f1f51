"""The distribution decides what runs: the evidence budget shared among strategies.

A route has ``EVIDENCE_SLOTS`` chunk slots. They are shared among the strategies of the
distribution by weight (largest remainder, so the slots always add up): the seed's
example, {multi_hop_guiado 0.60, casos_semelhantes 0.25, hibrida 0.10, raptor 0.05},
gets 12, 5, 2 and 1 of 20 slots. Strategies run heaviest first; each fills its slots with
chunks no heavier strategy already brought, and every delivered chunk says which strategy
(and which step) brought it.

The pattern's canonical strategy spends its slots on the pattern's reasoning template
(``data/patterns.yaml`` ``templates``): the full seven-step diagnostic chain for
diagnosis, shorter templates for the others (recommendation: situation → options →
trade-offs → recommendation with caveat; monitoring: indicator → reading → action …).
Each template step retrieves its own evidence, with its own class filter and an intent
fed by the previous step's findings. The other strategies run once over the pattern's
classes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .chain import multi_hop_guiado
from .corpus import Corpus, Hit
from .data import patterns_file
from .messages import TEMPLATE_INTENTS, TEMPLATE_TITLES
from .search import analyze
from .strategies import StrategyRun, casos_semelhantes, graphrag, hibrida, make_step, raptor

EVIDENCE_SLOTS = 20
SALIENT_TERMS = 6


def allocate_slots(distribution: Mapping[str, float], slots: int = EVIDENCE_SLOTS) -> dict[str, int]:
    """Largest-remainder shares of `slots` by weight, in the distribution's order."""
    total = sum(max(0.0, w) for w in distribution.values())
    if total <= 0 or slots <= 0:
        return {s: 0 for s in distribution}
    exact = {s: slots * max(0.0, w) / total for s, w in distribution.items()}
    out = {s: math.floor(v) for s, v in exact.items()}
    order = list(distribution)
    rest = sorted(order, key=lambda s: (-(exact[s] - out[s]), order.index(s)))
    for s in rest[: slots - sum(out.values())]:
        out[s] += 1
    return out


def split_evenly(n: int, parts: int, *, minimum: int = 1) -> list[int]:
    """`n` slots over `parts` steps, earlier steps first; every step gets at least `minimum`."""
    if parts <= 0:
        return []
    base, extra = divmod(max(n, 0), parts)
    return [max(minimum, base + (1 if i < extra else 0)) for i in range(parts)]


@dataclass
class EvidenceRun:
    steps: list[dict] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    interruptions: list[dict] = field(default_factory=list)
    evidence: list[dict] = field(default_factory=list)  # {chunk_id, strategy, step}
    budget: dict[str, int] = field(default_factory=dict)


def _run_strategy(
    strategy: str,
    corpus: Corpus,
    query_terms: Sequence[str],
    filters: Mapping,
    context: Mapping,
    *,
    k: int,
    intent: str,
    name: str,
) -> StrategyRun:
    if strategy == "casos_semelhantes":
        return casos_semelhantes(corpus, query_terms, context, intent=intent, k=k, name=name)
    if strategy == "graphrag":
        run = graphrag(corpus, query_terms, filters, intent=intent, seeds=max(1, min(3, k)), k=k)
    elif strategy == "raptor":
        run = raptor(corpus, query_terms, filters, intent=intent, k=k)
    else:
        run = hibrida(corpus, query_terms, filters, intent=intent, k=k, name=name)
    for step in run.steps:
        step.setdefault("name", name)
    return run


def _fresh(run: StrategyRun, seen: set[str], n: int) -> list[Hit]:
    out = []
    for hit in run.hits:
        cid = hit.record.chunk_id
        if cid in seen or any(h.record.chunk_id == cid for h in out):
            continue
        out.append(hit)
        if len(out) >= n:
            break
    return out


def _salient(corpus: Corpus, hits: Sequence[Hit], exclude: set[str]) -> list[str]:
    counts: dict[str, float] = {}
    for h in hits:
        for term in corpus.doc_terms[corpus.position[h.record.chunk_id]]:
            if term not in exclude and len(term) > 3:
                counts[term] = counts.get(term, 0.0) + (corpus.index.idf(term) if corpus.index is not None else 1.0)
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:SALIENT_TERMS]]


def _walk_details(run: StrategyRun) -> dict:
    """What a strategy says about how it searched (raptor's tree walk or branches)."""
    out: dict = {}
    for step in run.steps:
        out.update({k: v for k, v in step.items() if k in ("branches", "chosen", "tree")})
    return out


def pattern_template(pattern: str) -> list[dict]:
    return list(patterns_file().get("templates", {}).get(pattern) or [])


def run_template(
    corpus: Corpus,
    *,
    pattern: str,
    strategy: str,
    slots: int,
    message: str,
    context: Mapping[str, Sequence[str]],
    lang: str,
    seen: set[str],
) -> StrategyRun:
    """The pattern's short template: each step retrieves its own evidence (its classes,
    the context filters), its intent and query fed by the previous step's findings."""
    template = pattern_template(pattern)
    run = StrategyRun()
    message_terms = analyze(message)
    prev_terms: list[str] = []
    prev_ids: list[str] = []
    for spec, k in zip(template, split_evenly(slots, len(template))):
        step_id = spec["id"]
        step_strategy = spec.get("strategy") or strategy
        filters = {**context, "classe_ontologica": list(spec["classes"])}
        intent = TEMPLATE_INTENTS[step_id][lang if lang in TEMPLATE_INTENTS[step_id] else "pt"]
        query = message_terms + analyze(intent) + prev_terms
        # a template step keeps to its classes, whichever strategy runs it
        found = _run_strategy(
            step_strategy, corpus, query, filters, filters, k=k + len(seen), intent=intent, name=step_id
        )
        kept = _fresh(found, seen, k)
        seen.update(h.record.chunk_id for h in kept)
        walked = _walk_details(found)
        step = make_step(
            step_id,
            step_strategy,
            intent,
            filters,
            kept,
            title=TEMPLATE_TITLES[step_id][lang if lang in TEMPLATE_TITLES[step_id] else "pt"],
            uses={"chunks": list(prev_ids), "salient_terms": list(prev_terms)},
            template=pattern,
            status="ok" if kept else "empty",
            **walked,
        )
        if spec.get("caveat"):
            step["caveat"] = True
        run.steps.append(step)
        run.hits.extend(kept)
        if kept:
            prev_ids = [h.record.chunk_id for h in kept]
            prev_terms = _salient(corpus, kept, set(query))
    return run


def run_distribution(
    corpus: Corpus,
    *,
    pattern: str,
    distribution: Mapping[str, float],
    message: str,
    normalized_message: str,
    symptoms: Sequence[str],
    context: Mapping[str, Sequence[str]],
    filters: Mapping[str, Sequence[str]],
    lang: str,
    slots: int = EVIDENCE_SLOTS,
) -> EvidenceRun:
    spec = patterns_file()["patterns"][pattern]
    canonical = spec["canonical"]
    budget = allocate_slots(distribution, slots)
    out = EvidenceRun(budget=dict(budget))
    seen: set[str] = set()
    query_terms = analyze(message)
    for strategy, n in budget.items():
        if n <= 0:
            continue
        if strategy == "multi_hop_guiado":
            chain = patterns_file()["patterns"]["diagnosis"]["chain"]
            run = multi_hop_guiado(
                corpus,
                message=message,
                normalized_message=normalized_message,
                symptoms=symptoms,
                context_filters=context,
                template=chain,
                lang=lang,
                step_slots=split_evenly(n, len(chain)),
            )
            if strategy != canonical:
                # a share of the chain outside a diagnosis brings evidence, never stops the route
                run.interruptions = []
            role = "template" if strategy == canonical else "share"
        elif strategy == canonical and pattern_template(pattern):
            run = run_template(
                corpus,
                pattern=pattern,
                strategy=strategy,
                slots=n,
                message=message,
                context=context,
                lang=lang,
                seen=seen,
            )
            role = "template"
        else:
            found = _run_strategy(
                strategy, corpus, query_terms, filters, context, k=n + len(seen), intent=message, name=strategy
            )
            kept = _fresh(found, seen, n)
            extra = _walk_details(found)
            run = StrategyRun(
                [
                    make_step(
                        strategy,
                        strategy,
                        message,
                        filters if strategy != "casos_semelhantes" else context,
                        kept,
                        **extra,
                    )
                ],
                kept,
            )
            role = "share"
        for step in run.steps:
            step["slots"] = n
            step["role"] = role
            step["strategy"] = strategy if role == "share" or strategy == "multi_hop_guiado" else step["strategy"]
            for cite in step["chunks"]:
                cite["brought_by"] = strategy
        for hit in run.hits:
            cid = hit.record.chunk_id
            if not any(e["chunk_id"] == cid for e in out.evidence):
                out.evidence.append({"chunk_id": cid, "strategy": strategy})
        seen.update(h.record.chunk_id for h in run.hits)
        out.steps.extend(run.steps)
        out.hits.extend(run.hits)
        out.interruptions.extend(run.interruptions)
        if any(i["type"] in ("clarifying_question", "disambiguation") for i in run.interruptions):
            break
    return out
