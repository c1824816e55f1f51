"""Pure parameter checks: what fits, the form said back, and verification's comparison."""

import pytest

from actions.registry import candidate_ids
from actions.schema import expected_form, format_value, parameter_errors, schema_problems, values_match

DAYS = {
    "type": "object",
    "properties": {"value": {"type": "integer", "minimum": 1, "maximum": 90}, "unit": {"const": "days"}},
    "required": ["value", "unit"],
}
DATE = {"type": "object", "properties": {"value": {"type": "string", "format": "date"}, "unit": {"type": "null"}}}


@pytest.mark.parametrize(
    "schema, parameters, fits",
    [
        (DAYS, {"value": 30, "unit": "days"}, True),
        (DAYS, {"value": 30, "unit": "hours"}, False),
        (DAYS, {"value": 91, "unit": "days"}, False),
        (DAYS, {"value": 0, "unit": "days"}, False),
        (DAYS, {"value": "30", "unit": "days"}, False),
        (DATE, {"value": "2026-09-15", "unit": None}, True),
        (DATE, {"value": 30, "unit": "days"}, False),
        (DATE, {"value": "2026-02-30", "unit": None}, False),
    ],
)
def test_parameters_against_the_schema(schema, parameters, fits):
    assert (parameter_errors(schema, parameters) == []) is fits


def test_expected_forms_in_three_languages():
    assert expected_form(DAYS, language="en", label="Validity") == (
        "The Validity field takes a whole number of days from 1 to 90. Which value should I use?"
    )
    assert expected_form(DATE, language="es", label="Fecha").startswith("El campo Fecha recibe una fecha (AAAA-MM-DD")
    enum = {"type": "object", "properties": {"value": {"enum": ["A", "B"]}}}
    assert (
        expected_form(enum, language="pt", label="Classe")
        == "O campo Classe aceita um destes valores: A, B. Qual devo usar?"
    )


@pytest.mark.parametrize(
    "expected, unit, observed, match",
    [
        (30, "days", 30, True),
        (30, "days", "30", True),
        (30, "days", "30 dias", True),
        (30, "days", "30 days", True),
        (30, "days", "30 horas", False),
        (30, "days", "20 dias", False),
        (30, "days", 29, False),
        (30, "days", None, False),
        (30, "days", True, False),
        (30, "days", "[REDACTED]", False),
        ("2026-09-15", None, "2026-09-15", True),
        ("2026-09-15", None, "2026-09-16", False),
    ],
)
def test_values_match(expected, unit, observed, match):
    assert values_match(expected, unit, observed) is match


def test_format_value():
    assert format_value(30, "days", language="pt") == "30 dias"
    assert format_value(1, "days", language="pt") == "1 dia"
    assert format_value(2, "weeks", language="en") == "2 weeks"
    assert format_value(12.5, "percent", language="pt") == "12.5%"
    assert format_value("2026-09-15", None, language="pt") == "2026-09-15"


def test_schema_problems():
    assert schema_problems(DAYS) is None
    assert schema_problems({"type": "string"})
    assert schema_problems({"type": "object", "properties": {"unit": {}}})


def test_the_planner_tries_the_target_then_its_parents_nearest_first():
    assert candidate_ids("a.b.c", ("a.b.x", "a")) == ["a.b.c", "a.b.x", "a", "a.b"]
    assert candidate_ids("workPermit.components.equipment.validity", ()) == [
        "workPermit.components.equipment.validity",
        "workPermit.components.equipment",
        "workPermit.components",
        "workPermit",
    ]
