"""route(): message + active skills + corpus → pattern, distribution, strategy, filters,
steps with citations, interruptions and the structured context for the final LLM call."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .chain import STEP_TITLES
from .corpus import Corpus, Hit
from .data import critical_class_ids
from .distribution import SkillSpec, choose_strategy, context_filters, route_filters, strategy_distribution
from .evidence import run_distribution
from .messages import GUARDIAN, PATTERN_CHOICE, PATTERN_QUESTION, RISK_CAVEAT
from .patterns import classify
from .situational import situational_changes, symptoms_by_meaning
from .text import detect_language, mentions, normalize

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
    runner_up: str
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
    evidence: list[dict] = field(default_factory=list)  # {chunk_id, strategy}: who brought each chunk
    budget: dict[str, int] = field(default_factory=dict)  # evidence slots per strategy
    policy: dict = field(default_factory=dict)  # the learned policy's version + weights, when one routed

    @property
    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys(h.record.chunk_id for h in self.hits))

    def render_context(self) -> str:
        """The structured context for the agent's single final LLM call: one section per step."""
        lines = [f"# Contexto ontológico · padrão {self.pattern} · estratégia {self.strategy}"]
        lines.append(
            ANSWER_SHAPE_LINE + answer_shape(self.pattern, [s for s in self.steps if s.get("role") == "template"])
        )
        if self.filters:
            lines.append("Filtros: " + "; ".join(f"{k}={', '.join(v)}" for k, v in self.filters.items()))
        shown: set[str] = set()
        by_id = {h.record.chunk_id: h.record for h in self.hits}
        for number, step in enumerate(self.steps, start=1):
            title = step.get("title") or STEP_TITLES.get(step["name"], step["name"])
            if step.get("role") == "share":
                lines.append(f"\n## {number}. {SUPPORT_TITLE} ({step['strategy']})")
            else:
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
            "fallback": self.fallback,
            "runner_up": self.runner_up,
            "distribution": dict(self.distribution),
            "budget": dict(self.budget),
            "evidence": [dict(e) for e in self.evidence],
            "policy": dict(self.policy),
            "strategy": self.strategy,
            "filters": {k: list(v) for k, v in self.filters.items()},
            "steps": self.steps,
            "interruptions": self.interruptions,
            "skills": list(self.skills),
            "activated_skills": list(self.activated_skills),
            "deactivated_skills": list(self.deactivated_skills),
            "context": self.render_context(),
        }


# The answer the seed asks of an ontology agent: the reasoning's steps, in prose, with sources.
ANSWER_SHAPE_LINE = "Forma da resposta (answer shape): "
SUPPORT_TITLE = "Evidência complementar"


def answer_shape(pattern: str, template_steps: Sequence[dict]) -> str:
    if pattern == "diagnosis":
        order = "sintoma → causas prováveis → processos → intervenção → indicadores"
    else:
        titles = [s.get("title") or s["name"] for s in template_steps]
        order = " → ".join(dict.fromkeys(titles)) or pattern
    return (
        f"{order}; em prosa natural, na língua do usuário, sem listar os passos; cite entre colchetes o "
        "[chunk_id] de cada trecho usado; só afirme o que os trechos abaixo sustentam."
    )


def pattern_clarification(pattern: str, runner_up: str, lang: str) -> dict:
    """The one short question asked when the top two patterns are close."""
    a, b = PATTERN_CHOICE[pattern][lang], PATTERN_CHOICE[runner_up][lang]
    return {
        "type": "clarifying_question",
        "reason": "pattern_uncertain",
        "candidates": [pattern, runner_up],
        "questions": [{"id": "qual_padrao", "text": PATTERN_QUESTION[lang].format(a=a, b=b)}],
    }


def is_diagnosis_flow(pattern: str, fallback: bool, runner_up: str) -> bool:
    """The guardian interrupts during a diagnosis (seed): the message is one, or might be."""
    return pattern == "diagnosis" or (fallback and runner_up == "diagnosis")


def route(
    *,
    message: str,
    skills: Sequence[SkillSpec],
    corpus: Corpus,
    skill_catalog: Mapping[str, SkillSpec] | None = None,
    policy: Callable[[str, Sequence[SkillSpec]], Mapping[str, float]] | None = None,
) -> RouteOutcome:
    """`policy(pattern, active skills)` gives the strategy weights (the learned policy);
    without one, the deterministic matrix × skill priors."""
    text = normalize(message)
    lang = detect_language(text)
    symptoms = list(dict.fromkeys(mentions("sintomas", text) + symptoms_by_meaning(message)))
    active_ids = [s.id for s in skills]
    catalog = dict(skill_catalog or {})
    on, off = situational_changes(message, text, symptoms, active_ids, catalog)
    active = [s for s in skills if s.id not in off] + [catalog[sid] for sid in on]

    match = classify(message)
    prior = strategy_distribution(match.pattern, active)
    distribution = dict(policy(match.pattern, active)) if policy else prior
    strategy = choose_strategy(distribution)
    context = context_filters(active, message)
    filters = route_filters(match.pattern, context)
    outcome = RouteOutcome(
        pattern=match.pattern,
        confidence=match.confidence,
        fallback=match.fallback,
        runner_up=match.runner_up,
        distribution=distribution,
        strategy=strategy,
        filters=filters,
        skills=[s.id for s in active],
        activated_skills=on,
        deactivated_skills=off,
        symptoms=symptoms,
        language=lang,
        policy={"weights": dict(distribution), "learned": distribution != prior},
    )

    critical = [s for s in active if s.critical]
    if critical and is_diagnosis_flow(match.pattern, match.fallback, match.runner_up):
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

    run = run_distribution(
        corpus,
        pattern=match.pattern,
        distribution=distribution,
        message=message,
        normalized_message=text,
        symptoms=symptoms,
        context=context,
        filters=filters,
        lang=lang,
    )
    outcome.steps, outcome.hits, outcome.evidence, outcome.budget = run.steps, run.hits, run.evidence, run.budget
    outcome.interruptions = list(run.interruptions)
    if match.fallback:
        # unsure of the pattern: ask instead of guessing (the evidence stays for callers of /route)
        outcome.interruptions.insert(0, pattern_clarification(match.pattern, match.runner_up, lang))
    risk = _risk_triggers(text, run.hits)
    if risk:
        outcome.interruptions.append(
            {"type": "irreversible_risk", "triggers": risk, "caveat": RISK_CAVEAT[lang], "escalation_offer": True}
        )
    return outcome


def _risk_triggers(normalized_message: str, hits: Sequence[Hit]) -> list[str]:
    triggers = []
    if (m := RISK_CUES.search(normalized_message)) is not None:
        triggers.append(f"message:{m.group(0)}")
    for hit in hits:
        if hit.record.class_id in RISK_CLASSES:
            triggers.append(f"chunk:{hit.record.chunk_id}")
    return list(dict.fromkeys(triggers))


__all__ = ["RouteOutcome", "route", "critical_class_ids"]
