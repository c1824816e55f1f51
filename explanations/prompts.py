"""The narration prompt and the numbers a narrative may cite.

Pure functions over `ResultFacts` (no database): what goes to the model is
decided here, and it is the only place PII keys are dropped, so it is tested
directly. Every number in the prompt is written in pt-BR exactly as the
model must cite it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from common.text import fold_lower
from explanations.formatting import format_money, format_number, format_percent, format_period, format_points
from explanations.numbers import CitableNumber, extract_numbers
from explanations.numbers.meaning import BASELINE, BUDGET, TARGET, Entity, Meaning, fold
from explanations.numbers.types import (
    CODE,
    COUNT,
    CURRENCY,
    MONTH,
    NUMBER,
    PERCENT,
    PERCENTAGE_POINTS,
    QUARTER,
    SEMESTER,
    UNIT_KINDS,
    YEAR,
    is_currency,
)

# A breakdown can have thousands of entries; the narrative needs the ones
# that weigh most. Only the entries shown are citable.
MAX_BREAKDOWN_ITEMS = 20
__all__ = ["UNIT_KINDS", "ResultFacts", "build_prompt", "citable_numbers", "result_meaning"]
PERIOD_RE = r"^\d{4}(-(0[1-9]|1[0-2])|-Q[1-4]|-S[12])?$"
_PERCENT_SUFFIXES = ("_pct", "pct", "_percent", "_percentual", "_fraction")


def _name_key(name: str) -> str:
    """How PII keys are compared with dimension and total names: case,
    accents and surrounding spaces ignored. A client listing "Matrícula"
    for a dimension sent as "matricula" means the same people, and a
    mismatch would leak their values into the prompt."""
    return fold_lower(str(name).strip())


def _decimal(value) -> Decimal:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError) as exc:
        raise ValueError(f"not a number: {value!r}") from exc


@dataclass(frozen=True)
class ResultFacts:
    verdict: str
    totals: Mapping[str, Decimal] = field(default_factory=dict)
    breakdowns: Mapping[str, Mapping[str, Decimal]] = field(default_factory=dict)
    budget: Decimal | None = None
    target: Decimal | None = None
    period: str = ""  # "YYYY-MM", "YYYY", "YYYY-Qn" or "YYYY-Sn"
    rule_core: str = ""
    rule_specifics: str = ""
    rule_numbers: tuple = ()
    units: Mapping[str, str] = field(default_factory=dict)
    pii_keys: frozenset[str] = frozenset()
    counts: Mapping[str, int] = field(default_factory=dict)
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    rounding: str = "exact"

    @classmethod
    def from_result(cls, result) -> ResultFacts:
        return cls(
            verdict=result.verdict,
            totals={k: _decimal(v) for k, v in (result.totals or {}).items()},
            breakdowns={
                dim: {str(k): _decimal(v) for k, v in items.items()} for dim, items in (result.breakdowns or {}).items()
            },
            budget=result.budget,
            target=result.target,
            period=result.period or "",
            rule_core=result.rule_core or "",
            rule_specifics=result.rule_specifics or "",
            rule_numbers=tuple(result.rule_numbers or ()),
            units=dict(result.units or {}),
            pii_keys=frozenset(_name_key(k) for k in result.pii_keys or ()),
            counts={k: int(v) for k, v in (getattr(result, "counts", None) or {}).items()},
            labels={k: tuple(v) for k, v in (getattr(result, "labels", None) or {}).items()},
            rounding=getattr(result, "rounding", "") or "exact",
        )

    def unit(self, name: str) -> str:
        """Kind of a named value: `units` says, else a `*_pct` name is a
        fraction shown as a percentage, else money."""
        if name in self.units:
            return self.units[name]
        return PERCENT if name.lower().endswith(_PERCENT_SUFFIXES) else CURRENCY

    def is_pii(self, name: str) -> bool:
        return _name_key(name) in {_name_key(k) for k in self.pii_keys}

    def public_totals(self) -> dict[str, Decimal]:
        return {k: v for k, v in self.totals.items() if not self.is_pii(k)}

    def public_breakdowns(self) -> dict[str, list[tuple[str, Decimal]]]:
        shown = {}
        for dim, items in self.breakdowns.items():
            if self.is_pii(dim):
                continue
            ranked = sorted(items.items(), key=lambda kv: (-abs(kv[1]), kv[0]))
            shown[dim] = ranked[:MAX_BREAKDOWN_ITEMS]
        return shown

    def period_parts(self) -> tuple[int, int] | None:
        """(year, month) of a monthly period, else None."""
        parts = self.period_fields()
        return (parts["year"], parts["month"]) if parts and "month" in parts else None

    def period_fields(self) -> dict[str, int]:
        """{"year": 2026} plus "month", "quarter" or "semester" as given."""
        if not self.period:
            return {}
        year, _, rest = self.period.partition("-")
        fields = {"year": int(year)}
        if rest.startswith("Q"):
            fields["quarter"] = int(rest[1:])
        elif rest.startswith("S"):
            fields["semester"] = int(rest[1:])
        elif rest:
            fields["month"] = int(rest)
        return fields

    def period_text(self) -> str:
        return format_period(**self.period_fields()) if self.period else ""


def format_value(value: Decimal, kind: str) -> str:
    if is_currency(kind):
        return format_money(value, kind.partition(":")[2] or "BRL")
    if kind == PERCENT:
        return format_percent(value)
    if kind == PERCENTAGE_POINTS:
        # A fraction (0.012) normally; a value of 1 or more can only be points already (1.2 p.p.).
        return format_points(value if abs(value) < 1 else Decimal(value) / 100)
    return format_number(_plain(value))


def _plain(value: Decimal) -> Decimal:
    """12.500000 -> 12.5, 3.000 -> 3 (no exponent notation)."""
    value = Decimal(value)
    if value == value.to_integral_value():
        return value.quantize(Decimal(1))
    return value.normalize()


def _rule_number(item) -> CitableNumber:
    if isinstance(item, Mapping):
        value, kind = _decimal(item["value"]), item.get("kind", NUMBER)
    else:
        value, kind = _decimal(item), NUMBER
    return CitableNumber(value, kind, format_value(value, kind), "regra")


def citable_numbers(facts: ResultFacts) -> list[CitableNumber]:
    """Totals, breakdown values and numeric keys (PII dimensions excluded),
    counts, budget, target, the numbers of the verdict and the rule, and the
    period (year, and month, quarter or semester as given). Each knows the
    fact it belongs to (`entity`), for attribution."""
    found: list[CitableNumber] = []
    for name, value in facts.public_totals().items():
        kind = facts.unit(name)
        found.append(CitableNumber(value, kind, format_value(value, kind), f"totais.{name}", f"totals.{name}"))
    for dim, items in facts.public_breakdowns().items():
        kind = facts.units.get(dim, CURRENCY)
        for key, value in items:
            found.append(CitableNumber(value, kind, format_value(value, kind), f"{dim}.{key}", f"{dim}.{key}"))
            # A store code "0423" is cited as 0423 or 423. isdecimal, not
            # isdigit: "²" is a digit that int() refuses (the step would crash).
            if key.isdecimal():
                found.append(CitableNumber(Decimal(int(key)), CODE, key, f"{dim} (código)", f"{dim}.{key}"))
    for name, value in facts.counts.items():
        if not facts.is_pii(name):
            kind = facts.units.get(name, COUNT)
            text = f"{format_number(value)} {name.replace('_', ' ')}" if kind == COUNT else format_value(value, kind)
            found.append(CitableNumber(Decimal(value), kind, text, f"contagens.{name}", f"counts.{name}"))
    if facts.budget is not None:
        kind = facts.units.get("budget", CURRENCY)
        found.append(CitableNumber(facts.budget, kind, format_value(facts.budget, kind), "orçamento", BUDGET))
    if facts.target is not None:
        kind = facts.units.get("target", CURRENCY)
        found.append(CitableNumber(facts.target, kind, format_value(facts.target, kind), "meta", TARGET))
    found += [_rule_number(item) for item in facts.rule_numbers]
    # Numbers written in the verdict and the rule are citable as written
    # ("3 lojas acima da meta", "limite de 5%"): the model was given them.
    for label, text in (("veredito", facts.verdict), ("regra", facts.rule_core), ("regra", facts.rule_specifics)):
        for cited in extract_numbers(text):
            found.append(CitableNumber(cited.value, cited.kind, cited.text, label))
    if fields := facts.period_fields():
        text = facts.period_text()
        found.append(CitableNumber(Decimal(fields["year"]), YEAR, text, "competência (ano)", "period"))
        for part, kind, label in (
            ("month", MONTH, "mês"),
            ("quarter", QUARTER, "trimestre"),
            ("semester", SEMESTER, "semestre"),
        ):
            if part in fields:
                found.append(CitableNumber(Decimal(fields[part]), kind, text, f"competência ({label})", "period"))
    return found


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
    entities: list[Entity] = []
    differences: set[str] = set()
    parts: set[str] = set()
    nouns: set[str] = set()
    for name, value in facts.totals.items():
        key = _name_key(name)
        entities.append(Entity(f"totals.{name}", _total_labels(name, labels.get(key, ())), facts.is_pii(name)))
        if any(mark in key for mark in _DIFFERENCE_MARKS):
            differences.add(f"totals.{name}")
    for dim, items in facts.breakdowns.items():
        pii = facts.is_pii(dim)
        nouns.add(_folded_name(dim))
        nouns.update(fold(w) for w in labels.get(_name_key(dim), ()))
        signed = any(v < 0 for v in items.values())
        for key in items:
            names = {fold(str(key))}
            if str(key).isdecimal():
                names.add(str(int(key)))
            if pii and str(key).isdecimal() is False and len(str(key)) < 3:
                continue
            entities.append(Entity(f"{dim}.{key}", tuple(sorted(names)), pii))
            parts.add(f"{dim}.{key}")
            if signed:
                differences.add(f"{dim}.{key}")
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
        words = DEFAULT_LABELS[key] + tuple(fold(w) for w in labels.get(key, ()))
        entities.append(Entity(key, words))
        if not present:
            absent.add(key)

    totals = {_name_key(k): v for k, v in facts.totals.items()}
    main = next((totals[n] for n in MAIN_NAMES if n in totals), None)
    if main is None:
        main = next(
            (
                v
                for k, v in facts.totals.items()
                if is_currency(facts.unit(k))
                and _name_key(k) not in BASELINE_NAMES
                and not any(mark in _name_key(k) for mark in _DIFFERENCE_MARKS)
            ),
            None,
        )
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
    references = {ref: words + tuple(fold(w) for w in labels.get(ref, ())) for ref, words in REFERENCE_WORDS.items()}
    pii_values: set[Decimal] = set()
    for dim, items in facts.breakdowns.items():
        if facts.is_pii(dim):
            pii_values.update(abs(Decimal(v)) for v in items.values())
            pii_values.update(Decimal(int(k)) for k in items if str(k).isdecimal())
    for name, value in facts.totals.items():
        if facts.is_pii(name):
            pii_values.add(abs(Decimal(value)))
    return Meaning(
        entities=tuple(entities),
        signs=signs,
        references=references,
        differences=frozenset(differences),
        parts=frozenset(parts),
        pii_values=frozenset(pii_values),
        nouns=frozenset(nouns),
        absent=frozenset(absent),
        reference_entities={
            BUDGET: frozenset({BUDGET}),
            TARGET: frozenset({TARGET}),
            BASELINE: frozenset(f"totals.{k}" for k in facts.totals if _name_key(k) in BASELINE_NAMES),
        },
    )


def _unique_texts(citable: Iterable[CitableNumber]) -> list[str]:
    seen: dict[str, None] = {}
    for c in citable:
        seen.setdefault(c.text, None)
    return list(seen)


INSTRUCTIONS = """\
Você escreve a explicação de um resultado numérico para a pessoa que vai lê-lo \
(por exemplo, o profissional de RH). Explique o veredito e o que mais pesou no \
resultado.

Regras obrigatórias:
- Cite números somente da lista "Números citáveis", exatamente como estão escritos lá.
- Não faça contas: não calcule somas, diferenças, médias, proporções nem participações.
- Não cite nenhum outro número, nem por extenso, nem datas, quantidades ou posições.
- Não arredonde e não troque a unidade: moeda (R$, US$, €), %, pontos percentuais, contagens e períodos \
ficam como na lista, ditos de quem são (a filial, o orçamento, a meta) e no sentido certo (acima, abaixo).
- Escreva um texto curto (no máximo cinco frases), em português, sem listas nem títulos."""


def build_prompt(facts: ResultFacts, citable: list[CitableNumber] | None = None) -> str:
    """The prompt as sent. Holds no value of a PII key."""
    citable = citable_numbers(facts) if citable is None else citable
    lines = [INSTRUCTIONS, "", f"Veredito: {facts.verdict}"]
    if facts.period:
        lines.append(f"Competência: {facts.period_text()}")
    if totals := facts.public_totals():
        lines += ["", "Totais:"]
        lines += [f"- {name}: {format_value(v, facts.unit(name))}" for name, v in totals.items()]
    if breakdowns := facts.public_breakdowns():
        lines += ["", "Decomposição (maiores valores primeiro):"]
        for dim, items in breakdowns.items():
            kind = facts.units.get(dim, CURRENCY)
            lines.append(f"- {dim}:")
            lines += [f"  - {key}: {format_value(v, kind)}" for key, v in items]
            if len(facts.breakdowns[dim]) > len(items):
                lines.append("  - (demais itens omitidos)")
    if counts := {k: v for k, v in facts.counts.items() if not facts.is_pii(k)}:
        lines += ["", "Contagens:"]
        lines += [f"- {name}: {format_number(v)}" for name, v in counts.items()]
    if facts.budget is not None:
        lines += ["", f"Orçamento: {format_value(facts.budget, facts.units.get('budget', CURRENCY))}"]
    if facts.target is not None:
        lines.append(f"Meta: {format_value(facts.target, facts.units.get('target', CURRENCY))}")
    if facts.rule_core:
        lines += ["", "Regra (núcleo):", facts.rule_core.strip()]
    if facts.rule_specifics:
        lines += ["", "Regra (especificações):", facts.rule_specifics.strip()]
    lines += ["", "Números citáveis:"]
    lines += [f"- {text}" for text in _unique_texts(citable)]
    return "\n".join(lines) + "\n"


CITABLE_HEADER = "Números citáveis:"


def listed_citable_texts(prompt: str) -> list[str]:
    """The citable numbers a prompt lists (used by the offline narrator)."""
    _, _, tail = prompt.partition(CITABLE_HEADER)
    return [line[2:].strip() for line in tail.splitlines() if line.startswith("- ")]
