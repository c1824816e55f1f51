"""route(): message + active skills + corpus → pattern, distribution, strategy, filters,
steps with citations, interruptions and the structured context for the final LLM call."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .chain import STEP_TITLES, multi_hop_guiado
from .corpus import Corpus, Hit
from .data import critical_class_ids
from .distribution import (
    SkillSpec,
    choose_strategy,
    context_filters,
    pattern_spec,
    route_filters,
    strategy_distribution,
)
from .messages import GUARDIAN, RISK_CAVEAT
from .patterns import classify
from .search import analyze
from .strategies import StrategyRun, casos_semelhantes, graphrag, hibrida, raptor
from .text import detect_language, mentions, normalize

# casos_semelhantes complements any other chosen strategy when it weighs at least this
CASES_COMPLEMENT_MIN_WEIGHT = 0.2
RISK_CUES = re.compile(
    r"\b(dose|doses|dosagem|dosagens|quant[oa]s? (\w+ )?(devo |posso )?(aplicar|usar|colocar|de calcario|de gesso)|kg ?/ ?ha|g ?/ ?ha|l ?/ ?ha"
    r"|defensiv\w*|agrotoxic\w*|herbicid\w*|inseticid\w*|fungicid\w*|nematicid\w*|veneno|glifosato|dessec\w*"
    r"|(quando|devo|posso) (plantar|semear|replantar|dessecar)|replantio|data de plantio|arrancar a lavoura"
    r"|pesticid\w*|herbicide\w*|insecticide\w*|how much (lime|gypsum|fertili\w*)|when (should i|to) plant|should i (plant|replant)"
    r"|dosis|plaguicid\w*|agroquimic\w*|cuanto aplicar|(cuando|debo) (sembrar|plantar|resembrar))\b"
)
RISK_CLASSES = frozenset({"dosagem"})


@dataclass
class RouteOutcome:
    pattern: str
    confidence: float
    fallback: bool
    distribution: dict[str, float]
    strategy: str
    filters: dict[str, list[str]]
    steps: list[dict] = field(default_factory=list)
    interruptions: list[dict] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    activated_skills: list[str] = field(default_factory=list)
    deactivated_skills: list[str] = field(default_factory=list)
    symptoms: list[str] = field(default_factory=list)
    language: str = "pt"
    hits: list[Hit] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys(h.record.chunk_id for h in self.hits))

    def render_context(self) -> str:
        """The structured context for the agent's single final LLM call: one section per step."""
        lines = [f"# Contexto ontológico · padrão {self.pattern} · estratégia {self.strategy}"]
        if self.filters:
            lines.append("Filtros: " + "; ".join(f"{k}={', '.join(v)}" for k, v in self.filters.items()))
        shown: set[str] = set()
        by_id = {h.record.chunk_id: h.record for h in self.hits}
        for number, step in enumerate(self.steps, start=1):
            title = step.get("title") or STEP_TITLES.get(step["name"], step["name"])
            lines.append(f"\n## {number}. {title} ({step['strategy']})")
            if step.get("intent"):
                lines.append(f"Intenção: {step['intent']}")
            if step.get("branches"):
                lines.append("Ramos: " + ", ".join(b["ramo"] for b in step["branches"][:3]))
            for cite in step["chunks"]:
                record = by_id.get(cite["chunk_id"])
                if record is None:
                    continue
                source = f"fonte: {cite['fonte']}; evidência: {cite['tipo_evidencia']}; confiabilidade: {cite['confiabilidade']}"
                if cite["chunk_id"] in shown:
                    lines.append(f"- [{cite['chunk_id']}] (citado acima)")
                else:
                    shown.add(cite["chunk_id"])
                    lines.append(f"- [{cite['chunk_id']}] {record.text} ({source})")
            if step.get("status") not in (None, "ok"):
                lines.append(f"Status: {step['status']}")
        for item in self.interruptions:
            lines.append(f"\n[interrupção: {item['type']}]")
            for q in item.get("questions", []):
                lines.append(f"- {q['text']}")
            if item.get("caveat"):
                lines.append(item["caveat"])
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {
            "pattern": self.pattern,
            "confidence": self.confidence,
            "distribution": dict(self.distribution),
            "strategy": self.strategy,
            "filters": {k: list(v) for k, v in self.filters.items()},
            "steps": self.steps,
            "interruptions": self.interruptions,
            "skills": list(self.skills),
            "activated_skills": list(self.activated_skills),
            "deactivated_skills": list(self.deactivated_skills),
            "context": self.render_context(),
        }


def situational_changes(
    normalized_message: str, symptoms: Sequence[str], active: Sequence[str], catalog: Mapping[str, SkillSpec]
) -> tuple[list[str], list[str]]:
    """Situational skills switched on by a detected symptom / off by a resolution cue."""
    on, off = [], []
    for skill in catalog.values():
        spec = skill.situational or {}
        if not spec:
            continue
        triggers = set((spec.get("ativacao") or {}).get("sintomas") or ())
        ends = [normalize(t) for t in (spec.get("desativacao") or {}).get("termos") or ()]
        if skill.id in active and any(re.search(rf"\b{re.escape(t)}\b", normalized_message) for t in ends):
            off.append(skill.id)
        elif skill.id not in active and triggers & set(symptoms):
            on.append(skill.id)
    return on, off


def route(
    *,
    message: str,
    skills: Sequence[SkillSpec],
    corpus: Corpus,
    skill_catalog: Mapping[str, SkillSpec] | None = None,
) -> RouteOutcome:
    text = normalize(message)
    lang = detect_language(text)
    symptoms = mentions("sintomas", text)
    active_ids = [s.id for s in skills]
    on, off = situational_changes(text, symptoms, active_ids, skill_catalog or {})
    catalog = dict(skill_catalog or {})
    active = [s for s in skills if s.id not in off] + [catalog[sid] for sid in on]

    match = classify(message)
    distribution = strategy_distribution(match.pattern, active)
    strategy = choose_strategy(distribution)
    context = context_filters(active, message)
    filters = route_filters(match.pattern, context)
    outcome = RouteOutcome(
        pattern=match.pattern,
        confidence=match.confidence,
        fallback=match.fallback,
        distribution=distribution,
        strategy=strategy,
        filters=filters,
        skills=[s.id for s in active],
        activated_skills=on,
        deactivated_skills=off,
        symptoms=symptoms,
        language=lang,
    )

    critical = [s for s in active if s.critical]
    if critical:
        skill = critical[0]
        outcome.interruptions.append(
            {
                "type": "guardian_handoff",
                "skill": skill.id,
                "agent": skill.inference_agent or "agente_guardiao",
                "activated_now": skill.id in on,
                "message": GUARDIAN[lang],
            }
        )
        return outcome

    query_terms = analyze(message)
    if strategy == "multi_hop_guiado":
        template = pattern_spec(match.pattern).get("chain") or pattern_spec("diagnosis")["chain"]
        run = multi_hop_guiado(
            corpus,
            message=message,
            normalized_message=text,
            symptoms=symptoms,
            context_filters=context,
            template=template,
            lang=lang,
        )
    elif strategy == "casos_semelhantes":
        run = casos_semelhantes(corpus, query_terms, context, intent=message)
    elif strategy == "graphrag":
        run = graphrag(corpus, query_terms, filters, intent=message)
    elif strategy == "raptor":
        run = raptor(corpus, query_terms, filters, intent=message)
    else:
        run = hibrida(corpus, query_terms, filters, intent=message)

    blocking = {"clarifying_question", "disambiguation"}
    if (
        strategy != "casos_semelhantes"
        and distribution.get("casos_semelhantes", 0) >= CASES_COMPLEMENT_MIN_WEIGHT
        and not any(i["type"] in blocking for i in run.interruptions)
    ):
        run.extend(casos_semelhantes(corpus, query_terms, context, intent=message, role="complement"))

    outcome.steps, outcome.hits, outcome.interruptions = run.steps, run.hits, list(run.interruptions)
    risk = _risk_triggers(text, run)
    if risk:
        outcome.interruptions.append(
            {"type": "irreversible_risk", "triggers": risk, "caveat": RISK_CAVEAT[lang], "escalation_offer": True}
        )
    return outcome


def _risk_triggers(normalized_message: str, run: StrategyRun) -> list[str]:
    triggers = []
    if (m := RISK_CUES.search(normalized_message)) is not None:
        triggers.append(f"message:{m.group(0)}")
    for hit in run.hits:
        if hit.record.class_id in RISK_CLASSES:
            triggers.append(f"chunk:{hit.record.chunk_id}")
    return list(dict.fromkeys(triggers))


__all__ = ["RouteOutcome", "route", "critical_class_ids"]
