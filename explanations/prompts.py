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
from explanations.numbers.meaning import BUDGET, TARGET
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
__all__ = ["UNIT_KINDS", "ResultFacts", "build_prompt", "citable_numbers"]
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
