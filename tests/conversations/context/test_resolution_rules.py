"""Each rule of the resolver's table on its own: when it applies, what it binds, when it asks."""

import pytest

from conversations.context import rules as R
from conversations.context.resolver import read

from .samples import EQUIPMENT_TYPE, START_DATE, VALIDITY, make_context, without_focus


def ctx(**changes):
    context = make_context()
    for key, value in changes.items():
        if value is None:
            context.pop(key, None)
        else:
            context[key] = value
    return context


def two_visible(context=None):
    context = context or without_focus()
    context["viewport"] = {"visibleSemanticIds": [VALIDITY, START_DATE]}
    return context


def one_visible(context=None):
    context = context or without_focus()
    context["viewport"] = {"visibleSemanticIds": [VALIDITY]}
    return context


def target_of(binding):
    return (binding.target.kind, binding.target.semantic_id, binding.target.confidence)


def test_the_table_runs_in_the_documented_order():
    assert [rule.__name__ for rule in R.RULES] == [
        "named_element",
        "viewport_edge",
        "other_element",
        "focus_reference",
        "selection_reference",
        "tab_reference",
        "page_reference",
        "unbound_reference",
        "implicit_focus",
        "bare_message",
    ]


def test_the_first_rule_that_applies_decides():
    reading = read("Explique isso.", make_context())
    assert R.bind(reading) == R.focus_reference(reading)
    assert R.bind(reading, (R.page_reference, R.unbound_reference)) == R.unbound_reference(reading)
    assert R.bind(read("Explique.", without_focus()), (R.named_element,)) == R.Binding()


# --- named_element -------------------------------------------------------------------


def test_named_element_binds_the_labelled_field_exactly():
    binding = R.named_element(read("O que é a Data de Início?", make_context()))
    assert target_of(binding) == ("element", START_DATE, "exact")
    assert [r.semantic_id for r in binding.references] == [START_DATE]


def test_named_element_asks_when_isso_points_elsewhere():
    binding = R.named_element(read("Isso é a Data de Início?", make_context()))
    assert binding.target is None
    assert binding.clarification.reason == "named_element_differs_from_focus"


def test_named_element_does_not_apply_without_a_label_in_the_message():
    assert R.named_element(read("Explique isso.", make_context())) is None


# --- viewport_edge -----------------------------------------------------------------


def test_viewport_edge_binds_the_reported_top_element():
    assert target_of(R.viewport_edge(read("Explique o de cima.", make_context()))) == (
        "element",
        EQUIPMENT_TYPE,
        "medium",
    )


def test_viewport_edge_without_a_reported_edge_asks_among_several():
    context = two_visible()
    binding = R.viewport_edge(read("Explique o de cima.", context))
    assert binding.clarification.reason == "viewport_edge_unknown"


def test_viewport_edge_does_not_apply_without_the_words():
    assert R.viewport_edge(read("Explique isso.", make_context())) is None


# --- other_element -----------------------------------------------------------------


def test_other_element_is_the_one_visible_candidate_besides_the_focus():
    context = make_context()
    context["viewport"] = {"visibleSemanticIds": [VALIDITY, START_DATE]}
    assert target_of(R.other_element(read("E o outro?", context))) == ("element", START_DATE, "high")


def test_other_element_asks_when_several_remain():
    binding = R.other_element(read("E o outro?", make_context()))
    assert binding.clarification.reason == "several_other_elements"


def test_other_element_bound_to_nothing_falls_back_to_the_page_low():
    context = make_context()
    context["viewport"] = {"visibleSemanticIds": [VALIDITY]}
    assert target_of(R.other_element(read("E o outro?", context))) == ("page", "workPermit", "low")


# --- focus_reference ---------------------------------------------------------------


def test_focus_reference_is_the_focus_exactly():
    assert target_of(R.focus_reference(read("Explique isso.", make_context()))) == ("element", VALIDITY, "exact")


def test_focus_reference_without_focus_takes_the_only_candidate_or_asks():
    assert target_of(R.focus_reference(read("Explique isso.", one_visible()))) == ("element", VALIDITY, "medium")
    binding = R.focus_reference(read("Explique isso.", two_visible()))
    assert binding.clarification.reason == "no_focus_several_elements"


# --- selection_reference -----------------------------------------------------------


def test_selection_reference_is_the_selected_record():
    binding = R.selection_reference(read("Explique este registro.", make_context()))
    assert (binding.target.kind, binding.target.label, binding.target.confidence) == (
        "record",
        "PT-2026-004821",
        "exact",
    )


def test_selection_reference_without_a_selection_is_the_focus_medium():
    assert target_of(R.selection_reference(read("Explique este registro.", ctx(selection=None)))) == (
        "element",
        VALIDITY,
        "medium",
    )


# --- tab_reference and page_reference ----------------------------------------------


def test_tab_reference_is_the_active_tab():
    binding = R.tab_reference(read("Explique esta aba.", make_context()))
    assert (binding.target.kind, binding.target.label, binding.target.confidence) == ("tab", "Componentes", "exact")


def test_tab_reference_does_not_apply_without_an_active_tab():
    context = ctx(activeTabId=None)
    for tab in context["tabs"]:
        tab["active"] = False
    assert R.tab_reference(read("Explique esta aba.", context)) is None


def test_page_reference_is_the_page():
    assert target_of(R.page_reference(read("O que faço nesta página?", make_context()))) == (
        "page",
        "workPermit",
        "exact",
    )


# --- unbound_reference -------------------------------------------------------------


def test_unbound_reference_is_the_page_low_through_the_first_reference_word():
    reading = read("Explique isso.", make_context())
    binding = R.unbound_reference(reading)
    assert target_of(binding) == ("page", "workPermit", "low")
    assert binding.primary is reading.deictics[0]
    assert R.unbound_reference(read("Explique.", make_context())) is None


# --- implicit_focus and bare_message -----------------------------------------------


def test_implicit_focus_is_high_for_a_bare_message_and_low_for_a_longer_one():
    assert target_of(R.implicit_focus(read("Explique.", make_context()))) == ("element", VALIDITY, "high")
    long_message = "Quais documentos são obrigatórios para trabalho em altura?"
    assert target_of(R.implicit_focus(read(long_message, make_context()))) == ("element", VALIDITY, "low")
    assert R.implicit_focus(read("Explique isso.", make_context())) is None


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (one_visible(), ("element", VALIDITY, "medium")),
        (without_focus(viewport={"visibleSemanticIds": []}), ("record", None, "medium")),
        (without_focus(viewport={"visibleSemanticIds": []}, selection=None), ("page", "workPermit", "low")),
    ],
)
def test_bare_message_without_focus_falls_back_in_order(context, expected):
    assert target_of(R.bare_message(read("Explique.", context))) == expected


def test_bare_message_asks_among_several_and_ignores_longer_messages():
    assert R.bare_message(read("Explique.", two_visible())).clarification.reason == "no_focus_several_elements"
    assert R.bare_message(read("Quais documentos são obrigatórios para trabalho em altura?", without_focus())) is None
