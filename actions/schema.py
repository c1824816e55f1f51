"""Parameters of a capability: the JSON Schema check, the expected form said back to
the user when a value does not fit, and how a value is shown and compared.

Pure functions (no database): the policy and the verification both use them.
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

# Units the resolver produces (conversations.context.vocabulary.UNITS) and how they read.
UNIT_WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "pt": {
        "days": ("dia", "dias"),
        "hours": ("hora", "horas"),
        "minutes": ("minuto", "minutos"),
        "weeks": ("semana", "semanas"),
        "months": ("mês", "meses"),
        "years": ("ano", "anos"),
        "percent": ("%", "%"),
    },
    "en": {
        "days": ("day", "days"),
        "hours": ("hour", "hours"),
        "minutes": ("minute", "minutes"),
        "weeks": ("week", "weeks"),
        "months": ("month", "months"),
        "years": ("year", "years"),
        "percent": ("%", "%"),
    },
    "es": {
        "days": ("día", "días"),
        "hours": ("hora", "horas"),
        "minutes": ("minuto", "minutos"),
        "weeks": ("semana", "semanas"),
        "months": ("mes", "meses"),
        "years": ("año", "años"),
        "percent": ("%", "%"),
    },
}

_FORMAT_CHECKER = FormatChecker()


def schema_problems(schema: Any) -> str | None:
    """Why a capability's parameter schema is unusable, or None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'A JSON Schema of type "object" with "value" (and "unit") properties.'
    if "value" not in (schema.get("properties") or {}):
        return 'The schema must describe "value".'
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"Not a valid JSON Schema: {exc.message}"
    return None


def parameter_errors(schema: dict, parameters: dict) -> list[dict[str, str]]:
    """[{field, message}] for every way the parameters miss the schema; empty when they fit."""
    validator = Draft202012Validator(schema, format_checker=_FORMAT_CHECKER)
    errors = []
    for error in sorted(validator.iter_errors(parameters), key=lambda e: list(e.absolute_path)):
        field = ".".join(str(p) for p in error.absolute_path) or (
            error.validator_value[0] if error.validator == "required" and error.validator_value else ""
        )
        errors.append({"field": str(field or "value"), "message": error.message})
    return errors


def _value_schema(schema: dict) -> dict:
    return (schema.get("properties") or {}).get("value") or {}


def _unit_of(schema: dict) -> str | None:
    unit = (schema.get("properties") or {}).get("unit") or {}
    if "const" in unit:
        return unit["const"]
    if isinstance(unit.get("enum"), list) and len(unit["enum"]) == 1:
        return unit["enum"][0]
    return None


def expected_form(schema: dict, *, language: str, label: str) -> str:
    """The question that names the form a value must take, in the user's language."""
    value = _value_schema(schema)
    unit = _unit_of(schema)
    kind = value.get("type")
    if value.get("format") == "date":
        return {
            "pt": f"O campo {label} recebe uma data (AAAA-MM-DD, por exemplo 2026-09-15), não uma duração. Qual data devo usar?",
            "en": f"The {label} field takes a date (YYYY-MM-DD, e.g. 2026-09-15), not a duration. Which date should I use?",
            "es": f"El campo {label} recibe una fecha (AAAA-MM-DD, por ejemplo 2026-09-15), no una duración. ¿Qué fecha uso?",
        }.get(language) or expected_form(schema, language="pt", label=label)
    if isinstance(value.get("enum"), list):
        choices = ", ".join(str(v) for v in value["enum"])
        return {
            "pt": f"O campo {label} aceita um destes valores: {choices}. Qual devo usar?",
            "en": f"The {label} field takes one of: {choices}. Which one should I use?",
            "es": f"El campo {label} acepta uno de estos valores: {choices}. ¿Cuál uso?",
        }.get(language) or expected_form(schema, language="pt", label=label)
    if kind in ("integer", "number"):
        low, high = value.get("minimum"), value.get("maximum")
        words = UNIT_WORDS.get(language, UNIT_WORDS["pt"]).get(unit or "", ("", ""))[1]
        number = {"pt": "um número", "en": "a number", "es": "un número"}.get(language, "um número")
        if kind == "integer":
            number = {"pt": "um número inteiro", "en": "a whole number", "es": "un número entero"}.get(
                language, "um número inteiro"
            )
        of_unit = {"pt": f" de {words}", "en": f" of {words}", "es": f" de {words}"}.get(language, "") if words else ""
        bounds = ""
        if low is not None and high is not None:
            bounds = {
                "pt": f" entre {low} e {high}",
                "en": f" from {low} to {high}",
                "es": f" entre {low} y {high}",
            }.get(language, "")
        return {
            "pt": f"O campo {label} recebe {number}{of_unit}{bounds}. Qual valor devo usar?",
            "en": f"The {label} field takes {number}{of_unit}{bounds}. Which value should I use?",
            "es": f"El campo {label} recibe {number}{of_unit}{bounds}. ¿Qué valor uso?",
        }.get(language) or expected_form(schema, language="pt", label=label)
    return {
        "pt": f"Esse valor não serve para o campo {label}. Qual valor devo usar?",
        "en": f"That value does not fit the {label} field. Which value should I use?",
        "es": f"Ese valor no sirve para el campo {label}. ¿Qué valor uso?",
    }.get(language) or expected_form(schema, language="pt", label=label)


def format_value(value: Any, unit: str | None, *, language: str) -> str:
    """30, days → "30 dias"; a date or text as is."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if unit and isinstance(value, (int, float)):
        singular, plural = UNIT_WORDS.get(language, UNIT_WORDS["pt"]).get(unit, (unit, unit))
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        if unit == "percent":
            return f"{shown}%"
        return f"{shown} {singular if value == 1 else plural}"
    return str(value)


_NUMBER_WITH_UNIT = re.compile(r"^\s*(?P<number>-?\d+(?:[.,]\d+)?)\s*(?P<unit>[^\d\s].*?)?\s*$")


def _unit_code(word: str) -> str | None:
    from conversations.context.vocabulary import UNITS  # the resolver's own unit words

    folded = word.strip().lower()
    for singular_plural in UNIT_WORDS.values():
        for code, words in singular_plural.items():
            if folded in words:
                return code
    return UNITS.get(folded)


def values_match(expected: Any, expected_unit: str | None, observed: Any) -> bool:
    """Whether what the host shows (30, "30", "30 dias") is the value that was asked for."""
    if observed is None or isinstance(observed, (dict, list)):
        return False
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        if isinstance(observed, bool):
            return False
        if isinstance(observed, (int, float)):
            return float(observed) == float(expected)
        match = _NUMBER_WITH_UNIT.match(str(observed))
        if not match:
            return False
        number = float(match["number"].replace(",", "."))
        unit_word = match["unit"]
        if unit_word and expected_unit and _unit_code(unit_word) != expected_unit:
            return False
        return number == float(expected)
    return str(observed).strip() == str(expected).strip()
