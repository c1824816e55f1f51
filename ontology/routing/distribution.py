"""Strategy matrix × skill priors → the distribution over RAG strategies, and filters.

Distribution (Phase 0: deterministic and auditable):

* the pattern's canonical strategy keeps its matrix weight ``w_c`` — the pattern, not the
  profile, decides how much the canonical method counts;
* the rest, ``1 − w_c``, is shared by the other strategies the pattern allows (all but the
  canonical and the ones it ``excluded``), in proportion to their support

      support(s) = matrix(s) + mean over active skills of rag_bias(s)

  (a strategy outside the matrix gets weight only from the skills' bias);
* weights are rounded to 4 decimals and zero weights dropped.

With no skills the distribution is the matrix row. The seed's example (diagnosis with
bioma_cerrado, graos_soja_milho, transicao_em_curso, produtor_rural) gives
multi_hop_guiado 0.60, casos_semelhantes 0.25, hibrida 0.10, raptor 0.05; the arithmetic
is written out in docs/ontology.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .data import patterns_file, strategies
from .text import mentions, normalize

WILDCARD = "*"
# message mentions narrow (or replace) these skill filters
MESSAGE_FILTER_GROUPS = {"bioma": "biomas", "cultura": "culturas"}


@dataclass(frozen=True)
class SkillSpec:
    """A Skill as the router sees it (the seed's field names, in English)."""

    id: str
    category: str = ""
    rag_bias: Mapping[str, float] = field(default_factory=dict)
    index_filters: Mapping[str, object] = field(default_factory=dict)
    critical: bool = False
    inference_agent: str = ""
    situational: Mapping[str, object] | None = None

    @classmethod
    def from_seed(cls, data: Mapping) -> SkillSpec:
        return cls(
            id=data["id"],
            category=data.get("categoria", ""),
            rag_bias=dict(data.get("rag_bias") or {}),
            index_filters=dict(data.get("filtros_indexacao") or {}),
            critical=bool(data.get("critica", False)),
            inference_agent=data.get("agente_inferencia", ""),
            situational=data.get("situacional"),
        )


def pattern_spec(pattern: str) -> Mapping:
    return patterns_file()["patterns"][pattern]


def strategy_distribution(pattern: str, skills: Sequence[SkillSpec]) -> dict[str, float]:
    spec = pattern_spec(pattern)
    canonical = spec["canonical"]
    matrix = spec["weights"]
    w_c = float(matrix[canonical])
    excluded = set(spec.get("excluded") or ())
    others = [s for s in strategies() if s != canonical and s not in excluded]
    biased = [s for s in skills if s.rag_bias]
    support = {}
    for strategy in others:
        bias = sum(float(s.rag_bias.get(strategy, 0.0)) for s in biased) / len(biased) if biased else 0.0
        support[strategy] = float(matrix.get(strategy, 0.0)) + bias
    total = sum(support.values())
    dist = {canonical: round(w_c, 4)}
    for strategy in others:
        weight = round((1.0 - w_c) * support[strategy] / total, 4) if total else 0.0
        if weight > 0:
            dist[strategy] = weight
    order = strategies()
    return dict(sorted(dist.items(), key=lambda kv: (-kv[1], kv[0] != canonical, order.index(kv[0]))))


def choose_strategy(distribution: Mapping[str, float]) -> str:
    """Phase 0 policy: the heaviest strategy (the distribution is already ordered)."""
    return next(iter(distribution))


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]  # type: ignore[union-attr]


def context_filters(skills: Iterable[SkillSpec], message: str) -> dict[str, list[str]]:
    """Metadata filters from the skills' ``filtros_indexacao``, narrowed by the message.

    "*" is no filter. Several skills add up (union per key). A biome or crop named in the
    message replaces that key's values ("soja" narrows graos_soja_milho's [soja, milho]).
    """
    filters: dict[str, list[str]] = {}
    for skill in skills:
        for key, value in skill.index_filters.items():
            values = [v for v in _as_list(value) if v != WILDCARD]
            if not values:
                continue
            bucket = filters.setdefault(key, [])
            bucket.extend(v for v in values if v not in bucket)
    text = normalize(message)
    for key, group in MESSAGE_FILTER_GROUPS.items():
        named = mentions(group, text)
        if named:
            filters[key] = named
    ordered = {k: filters[k] for k in MESSAGE_FILTER_GROUPS if k in filters}
    ordered.update({k: v for k, v in filters.items() if k not in ordered})
    return ordered


def route_filters(pattern: str, context: Mapping[str, list[str]]) -> dict[str, list[str]]:
    return {**context, "classe_ontologica": list(pattern_spec(pattern)["classes"])}
