"""The entities of a result and the signs of its differences (`result_meaning`).

Pure, like `prompts`: what the checker needs to tell who a number is said of
and which way a change goes (`explanations.numbers.meaning`). Fact names,
breakdown keys and the result's `labels` become the pt words that name each
entity; the main total, the baseline, the budget and the target give the
signs a direction word must agree with.
"""

from __future__ import annotations

from decimal import Decimal

from explanations.numbers.meaning import BASELINE, BUDGET, TARGET, Entity, Meaning, fold
from explanations.numbers.types import is_currency
from explanations.prompts import _PERCENT_SUFFIXES, ResultFacts, _name_key

# pt words that name facts, by fact name; a result's `labels` adds its own.
DEFAULT_LABELS = {
    "simulado": ("simulado", "simulada", "custo simulado", "valor simulado", "total simulado", "folha simulada"),
    "baseline": ("baseline", "linha de base", "custo atual", "folha atual", "valor atual", "cenario atual"),
    "diferenca": ("diferenca", "variacao", "impacto", "aumento", "acrescimo", "reducao", "queda", "economia"),
    "budget": ("orcamento", "teto", "teto orcamentario", "limite orcamentario", "verba"),
    "target": ("meta", "meta de venda", "meta de vendas", "objetivo", "alvo"),
    "period": ("competencia", "periodo"),
}
# Names a main total, a baseline or a difference is sent under.
MAIN_NAMES = (
    "simulado",
    "simulada",
    "simulated",
    "custo_simulado",
    "realizado",
    "resultado",
    "total",
    "vendas",
    "custo",
)
BASELINE_NAMES = ("baseline", "base", "atual", "custo_atual", "anterior", "referencia")
_DIFFERENCE_MARKS = ("diferenca", "variacao", "delta", "diff", "impacto")
REFERENCE_WORDS = {
    BASELINE: ("baseline", "linha de base", "base", "atual", "anterior", "referencia", "cenario atual", "mes anterior"),
    BUDGET: DEFAULT_LABELS["budget"] + ("limite",),
    TARGET: DEFAULT_LABELS["target"],
}


def _folded_name(name: str) -> str:
    return fold(str(name).replace("_", " ").strip())


def _total_labels(name: str, extra) -> tuple[str, ...]:
    key = _name_key(name)
    base = key
    for suffix in _PERCENT_SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    labels = {_folded_name(base), _folded_name(key)}
    for known, words in DEFAULT_LABELS.items():
        if base.rstrip("_") == known:
            labels.update(words)
    labels.update(fold(w) for w in extra)
    return tuple(sorted(w for w in labels if w))


def _sign(value: Decimal) -> int:
    return (value > 0) - (value < 0)


def result_meaning(facts: ResultFacts) -> Meaning:
    """The entities of a result and the signs of its differences, for
    `check_narrative(..., meaning=...)`."""
    labels = {_name_key(k): v for k, v in facts.labels.items()}
    entities, differences, parts, nouns, absent = _entities(facts, labels)
    references = {ref: words + tuple(fold(w) for w in labels.get(ref, ())) for ref, words in REFERENCE_WORDS.items()}
    return Meaning(
        entities=tuple(entities),
        signs=_signs(facts),
        references=references,
        differences=frozenset(differences),
        parts=frozenset(parts),
        pii_values=_pii_values(facts),
        nouns=frozenset(nouns),
        absent=frozenset(absent),
        reference_entities={
            BUDGET: frozenset({BUDGET}),
            TARGET: frozenset({TARGET}),
            BASELINE: frozenset(f"totals.{k}" for k in facts.totals if _name_key(k) in BASELINE_NAMES),
        },
    )


def _entities(facts: ResultFacts, labels: dict):
    entities: list[Entity] = []
    differences: set[str] = set()
    parts: set[str] = set()
    nouns: set[str] = set()
    for name in facts.totals:
        key = _name_key(name)
        entities.append(Entity(f"totals.{name}", _total_labels(name, labels.get(key, ())), facts.is_pii(name)))
        if any(mark in key for mark in _DIFFERENCE_MARKS):
            differences.add(f"totals.{name}")
    for dim, items in facts.breakdowns.items():
        nouns.add(_folded_name(dim))
        nouns.update(fold(w) for w in labels.get(_name_key(dim), ()))
        # A breakdown with a negative value holds contributions to the difference: their sign is a direction.
        signed = any(v < 0 for v in items.values())
        for key in items:
            entity = _breakdown_entity(dim, str(key), facts.is_pii(dim))
            if entity is None:
                continue
            entities.append(entity)
            parts.add(entity.key)
            if signed:
                differences.add(entity.key)
    for name in facts.counts:
        entities.append(
            Entity(f"counts.{name}", _total_labels(name, labels.get(_name_key(name), ())), facts.is_pii(name))
        )
    absent = set()
    for key, present in (
        (BUDGET, facts.budget is not None),
        (TARGET, facts.target is not None),
        ("period", bool(facts.period)),
    ):
        # A budget or target the result does not have is still named: a value said of it is someone else's.
        entities.append(Entity(key, DEFAULT_LABELS[key] + tuple(fold(w) for w in labels.get(key, ()))))
        if not present:
            absent.add(key)
    return entities, differences, parts, nouns, absent


def _breakdown_entity(dim: str, key: str, pii: bool) -> Entity | None:
    names = {fold(key)}
    if key.isdecimal():
        names.add(str(int(key)))
    elif pii and len(key) < 3:
        return None  # a two-letter person key would match ordinary words
    return Entity(f"{dim}.{key}", tuple(sorted(names)), pii)


def _main_total(facts: ResultFacts, totals: dict) -> Decimal | None:
    main = next((totals[n] for n in MAIN_NAMES if n in totals), None)
    if main is not None:
        return main
    return next(
        (
            v
            for k, v in facts.totals.items()
            if is_currency(facts.unit(k))
            and _name_key(k) not in BASELINE_NAMES
            and not any(mark in _name_key(k) for mark in _DIFFERENCE_MARKS)
        ),
        None,
    )


def _signs(facts: ResultFacts) -> dict[str, int]:
    totals = {_name_key(k): v for k, v in facts.totals.items()}
    main = _main_total(facts, totals)
    baseline = next((totals[n] for n in BASELINE_NAMES if n in totals), None)
    signs: dict[str, int] = {}
    if main is not None and baseline is not None:
        signs[BASELINE] = _sign(main - baseline)
    else:
        difference = next((v for k, v in totals.items() if any(mark in k for mark in _DIFFERENCE_MARKS)), None)
        if difference is not None:
            signs[BASELINE] = _sign(difference)
    if main is not None and facts.budget is not None:
        signs[BUDGET] = _sign(main - facts.budget)
    if main is not None and facts.target is not None:
        signs[TARGET] = _sign(main - facts.target)
    return signs


def _pii_values(facts: ResultFacts) -> frozenset[Decimal]:
    values: set[Decimal] = set()
    for dim, items in facts.breakdowns.items():
        if facts.is_pii(dim):
            values.update(abs(Decimal(v)) for v in items.values())
            values.update(Decimal(int(k)) for k in items if str(k).isdecimal())
    for name, value in facts.totals.items():
        if facts.is_pii(name):
            values.add(abs(Decimal(value)))
    return frozenset(values)
