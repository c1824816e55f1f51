import pytest

from conversations.context import SemanticInfo, resolve
from conversations.context.resolver import ContextView, parent_chain

from .samples import EQUIPMENT_TYPE, START_DATE, VALIDITY, make_context, without_focus

FULL_REWRITE = "Explique o campo Validade do registro PT-2026-004821, na aba Componentes da Permissão de Trabalho."


def two_visible_fields_without_focus():
    context = without_focus()
    context["viewport"] = {"visibleSemanticIds": [VALIDITY, START_DATE]}
    return context


# --- the seed's examples -----------------------------------------------------------


def test_explique_isso_resolves_to_the_focus_and_is_rewritten_explicitly():
    resolution = resolve("Explique isso.", make_context())
    assert resolution.status == "resolved"
    assert resolution.target.semantic_id == VALIDITY
    assert resolution.target.confidence == "exact"
    assert resolution.rewritten_message == FULL_REWRITE


def test_a_bare_explique_means_the_focused_field():
    resolution = resolve("Explique.", make_context())
    assert resolution.target.semantic_id == VALIDITY
    assert resolution.target.confidence == "high"
    assert resolution.rewritten_message == FULL_REWRITE


def test_altere_isso_para_30_dias_proposes_an_update_field_intent():
    resolution = resolve("Altere isso para 30 dias.", make_context())
    assert resolution.intent == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": 30, "unit": "days"}
    assert resolution.status == "resolved"


def test_a_non_ascii_digit_in_an_update_never_crashes():
    # Found by the property test: "²" is a Unicode digit that int() refuses.
    resolution = resolve("Altere isso para ² dias.", make_context())
    assert resolution.intent["value"] == 2


@pytest.mark.parametrize(
    ("message", "value", "unit"),
    [
        ("Change this to 45 days", 45, "days"),
        ("Cambia esto a 2,5 horas", 2.5, "hours"),
        ("Mude isso para 12 meses", 12, "months"),
        ('Altere isso para "Andaime"', "Andaime", None),
    ],
)
def test_update_intents_in_three_languages(message, value, unit):
    intent = resolve(message, make_context()).intent
    assert intent == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": value, "unit": unit}


def test_no_intent_without_a_value_or_for_a_question():
    assert resolve("Altere isso.", make_context()).intent is None
    assert resolve("Explique isso.", make_context()).intent is None


# --- deictics per kind and language -------------------------------------------------


@pytest.mark.parametrize(
    "message",
    ["O que é isso?", "Explique isto", "Para que serve esse campo?", "What is this?", "¿Qué es esto?", "¿Y eso?"],
)
def test_focus_deictics_point_at_the_focus(message):
    resolution = resolve(message, make_context())
    assert resolution.target.semantic_id == VALIDITY
    assert resolution.target.confidence == "exact"
    assert resolution.references[0].kind == "focus"


@pytest.mark.parametrize(
    "message", ["Explique este registro", "Quem aprovou este?", "Summarize this record", "Resume este registro"]
)
def test_selection_deictics_point_at_the_selected_record(message):
    resolution = resolve(message, make_context())
    assert resolution.target.kind == "record"
    assert resolution.target.label == "PT-2026-004821"
    assert resolution.references[0].kind == "selection"


@pytest.mark.parametrize(
    "message", ["O que posso fazer aqui?", "O que existe nesta página?", "What can I do here?", "¿Qué hago aquí?"]
)
def test_page_deictics_point_at_the_page(message):
    resolution = resolve(message, make_context())
    assert resolution.target.kind == "page"
    assert resolution.target.semantic_id == "workPermit"


def test_aqui_is_rewritten_as_the_page_and_tab():
    resolution = resolve("O que posso fazer aqui?", make_context())
    assert resolution.rewritten_message == "O que posso fazer na página Permissão de Trabalho, na aba Componentes?"


def test_nesta_aba_points_at_the_active_tab():
    resolution = resolve("O que tem nesta aba?", make_context())
    assert resolution.target.kind == "tab"
    assert resolution.target.label == "Componentes"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("O que é o campo acima?", EQUIPMENT_TYPE),
        ("O que é esse item aqui embaixo?", START_DATE),
        ("What is the field above?", EQUIPMENT_TYPE),
        ("What is below?", START_DATE),
        ("¿Qué es lo de arriba?", EQUIPMENT_TYPE),
        ("¿Y lo de abajo?", START_DATE),
    ],
)
def test_above_and_below_use_the_viewport_edges(message, expected):
    resolution = resolve(message, make_context())
    assert resolution.target.semantic_id == expected
    assert resolution.target.confidence == "medium"


def test_esse_item_aqui_embaixo_is_rewritten_as_one_reference():
    resolution = resolve("O que é esse item aqui embaixo?", make_context())
    assert resolution.rewritten_message == (
        "O que é o campo Data de Início do registro PT-2026-004821, na aba Componentes da Permissão de Trabalho?"
    )


def test_english_and_spanish_rewrites():
    assert resolve("Explain this.", make_context()).rewritten_message == (
        "Explain the Validade field of record PT-2026-004821, in the Componentes tab of Permissão de Trabalho."
    )
    assert resolve("Explica esto.", make_context()).rewritten_message == (
        "Explica el campo Validade del registro PT-2026-004821, en la pestaña Componentes de Permissão de Trabalho."
    )


# --- hidden, collapsed, inactive, disabled ------------------------------------------


@pytest.mark.parametrize("state", ["hidden", "collapsed", "inactive", "disabled"])
def test_a_focus_that_is_not_visible_never_becomes_the_target(state):
    context = make_context()
    context["focus"]["visibility"] = state
    resolution = resolve("Explique isso.", context)
    assert resolution.target is None or resolution.target.semantic_id != VALIDITY
    assert all(option.semantic_id != VALIDITY for option in getattr(resolution.clarification, "options", ()))
    assert "focus_not_targetable" in resolution.notes


@pytest.mark.parametrize("state", ["hidden", "collapsed", "inactive", "disabled"])
def test_a_viewport_edge_that_is_not_visible_is_not_the_target(state):
    context = make_context()
    next(e for e in context["elements"] if e["semanticId"] == EQUIPMENT_TYPE)["visibility"] = state
    resolution = resolve("O que é o campo acima?", context)
    assert resolution.target is None or resolution.target.semantic_id != EQUIPMENT_TYPE


def test_a_field_inside_an_inactive_tab_is_not_a_target():
    context = make_context()
    context["focus"] = {"semanticId": "workPermit.documents.attachments", "type": "table", "label": "Anexos"}
    resolution = resolve("Explique isso.", context)
    assert resolution.target is None or resolution.target.semantic_id != "workPermit.documents.attachments"


def test_a_focus_whose_listed_copy_is_hidden_is_not_a_target():
    context = make_context()
    context["focus"] = {
        "semanticId": "workPermit.documents.attachments",
        "type": "table",
        "label": "Anexos",
        "parentIds": ["workPermit.components"],
    }  # the elements list the same id with visibility "hidden"
    resolution = resolve("Explique isso.", context)
    assert resolution.target is None or resolution.target.semantic_id != "workPermit.documents.attachments"


def test_declared_focus_parents_win_over_the_guessed_chain_of_its_listed_copy():
    # As the demo sends it after a tab click: the delta replaces the element list (the tab without
    # parentIds, so its dotted chain passes through the disabled Componentes section) and merges the
    # focus, which keeps its declared parents. One entry per id: the resolver and the view agree.
    context = make_context()
    context["elements"] = [
        {"semanticId": "workPermit.components.tab", "type": "tab", "label": "Componentes"},
        {"semanticId": "workPermit.components", "type": "section", "label": "Componentes", "visibility": "disabled"},
    ]
    context["focus"] = {"semanticId": "workPermit.components.tab", "label": "Componentes", "parentIds": ["workPermit"]}
    resolution = resolve("Explique isso.", context)
    assert resolution.target.semantic_id == "workPermit.components.tab"
    view = ContextView(context)
    assert view.element("workPermit.components.tab") is view.focus
    assert view.is_targetable(view.element("workPermit.components.tab"))


def test_a_hidden_element_named_in_the_message_is_not_a_target():
    resolution = resolve("Explique a tabela Anexos.", make_context())
    assert resolution.target.semantic_id != "workPermit.documents.attachments"
    assert "named_element_not_targetable" in resolution.notes


# --- ambiguity -> clarifying question, no guess ---------------------------------------


def test_no_focus_and_several_visible_fields_asks_which_one():
    resolution = resolve("Explique isso.", two_visible_fields_without_focus())
    assert resolution.status == "clarification"
    assert resolution.target is None
    assert resolution.clarification.question == "Você quer que eu explique o campo Validade ou o campo Data de Início?"
    assert [o.semantic_id for o in resolution.clarification.options] == [VALIDITY, START_DATE]


def test_a_named_field_that_differs_from_the_focus_asks_which_one():
    resolution = resolve("Explique esse campo Data de Início.", make_context())
    assert resolution.status == "clarification"
    assert resolution.clarification.reason == "named_element_differs_from_focus"
    assert resolution.clarification.question == "Você quer que eu explique o campo Validade ou o campo Data de Início?"


def test_a_field_named_without_a_deictic_is_explicit():
    resolution = resolve("O que é o campo Data de Início?", make_context())
    assert resolution.status == "resolved"
    assert resolution.target.semantic_id == START_DATE
    assert resolution.target.confidence == "exact"
    assert resolution.rewritten_message == (
        "O que é o campo Data de Início do registro PT-2026-004821, na aba Componentes da Permissão de Trabalho?"
    )


def test_a_label_shared_by_two_elements_asks_which_one():
    context = without_focus()
    context["elements"].append({"semanticId": "workPermit.general.validity", "type": "field", "label": "Validade"})
    context["viewport"]["visibleSemanticIds"].append("workPermit.general.validity")
    context["tabs"] = []
    context.pop("activeTabId")
    resolution = resolve("O que é a Validade?", context)
    assert resolution.status == "clarification"
    assert resolution.clarification.reason == "label_matches_several_elements"


def test_clarifications_speak_the_language_of_the_message():
    context = two_visible_fields_without_focus()
    assert resolve("Explain this.", context).clarification.question == (
        "Do you want me to explain the Validade field or the Data de Início field?"
    )
    assert resolve("Explica esto.", context).clarification.question == (
        "¿Quieres que explique el campo Validade o el campo Data de Início?"
    )
    assert resolve("Altere isso para 30 dias.", context).clarification.question == (
        "Você quer que eu altere o campo Validade ou o campo Data de Início?"
    )


def test_an_update_on_an_uncertain_target_is_confirmed_not_proposed():
    context = make_context()
    context["focus"]["visibility"] = "disabled"
    resolution = resolve("Altere isso para 30 dias.", context)
    assert resolution.intent is None
    assert resolution.status == "clarification"
    assert VALIDITY not in [o.semantic_id for o in resolution.clarification.options]


def test_a_single_visible_field_without_focus_is_a_medium_confidence_target():
    context = without_focus()
    context["viewport"] = {"visibleSemanticIds": [START_DATE]}
    resolution = resolve("Explique isso.", context)
    assert resolution.target.semantic_id == START_DATE
    assert resolution.target.confidence == "medium"


def test_a_reference_with_nothing_to_bind_falls_back_to_the_page_with_low_confidence():
    context = without_focus(elements=[], viewport={})
    resolution = resolve("Explique isso.", context)
    assert resolution.target.kind == "page"
    assert resolution.target.confidence == "low"


def test_a_general_question_keeps_the_focus_as_low_confidence_context():
    resolution = resolve("Quais tipos de permissão existem?", make_context())
    assert resolution.target.semantic_id == VALIDITY
    assert resolution.target.confidence == "low"
    assert resolution.rewritten_message.startswith("Quais tipos de permissão existem? (contexto: o campo Validade")


# --- record change ------------------------------------------------------------------


def test_a_record_change_between_messages_is_reported_not_silently_carried_over():
    previous = {"entityType": "workPermit", "entityId": "4922", "displayName": "PT-2026-004922"}
    resolution = resolve("E a validade?", make_context(), previous_selection=previous)
    change = resolution.record_change
    assert change.previous == {"entityType": "workPermit", "entityId": "4922"}
    assert change.current == {"entityType": "workPermit", "entityId": "4821"}
    assert change.notice == (
        "O registro selecionado mudou de PT-2026-004922 para PT-2026-004821; "
        "esta resposta considera somente PT-2026-004821."
    )


def test_the_same_record_is_not_a_change_and_a_cleared_selection_is():
    same = {"entityType": "workPermit", "entityId": "4821"}
    assert resolve("Explique.", make_context(), previous_selection=same).record_change is None
    cleared = resolve("Explique.", make_context(drop=("selection",)), previous_selection=same).record_change
    assert cleared.current is None
    assert "não está mais selecionado" in cleared.notice


# --- hierarchy ----------------------------------------------------------------------


def test_parent_chain_follows_the_dotted_id_unless_declared():
    assert parent_chain(VALIDITY) == (
        "workPermit.components.equipment",
        "workPermit.components",
        "workPermit",
    )
    registry = {"equipment.validity": SemanticInfo(label="Validade", parent="workPermit.components.equipment")}
    assert parent_chain("equipment.validity", None, registry) == (
        "workPermit.components.equipment",
        "workPermit.components",
        "workPermit",
    )
    # Declared parentIds, root first as in the seed, come back nearest first.
    assert parent_chain("x.y", ["workPermit", "workPermit.components"]) == ("workPermit.components", "workPermit")


def test_registry_labels_name_elements_the_context_only_lists_by_id():
    context = without_focus(elements=[])
    context["viewport"] = {"visibleSemanticIds": [VALIDITY, START_DATE]}
    registry = {
        VALIDITY: SemanticInfo("Validade", None, "field"),
        START_DATE: SemanticInfo("Data de Início", None, "field"),
    }
    resolution = resolve("Explique isso.", context, registry=registry)
    assert resolution.clarification.question == "Você quer que eu explique o campo Validade ou o campo Data de Início?"


@pytest.mark.parametrize(
    ("message", "kind", "rewritten"),
    [
        (
            "Qual o prazo deste equipamento?",
            "record",
            "Qual o prazo deste equipamento (o registro PT-2026-004821)?",
        ),
        ("Quem aprovou este?", "record", "Quem aprovou o registro PT-2026-004821?"),
        ("Este é o mais recente?", "record", "O registro PT-2026-004821 é o mais recente?"),
        (
            "What does this mean?",
            "element",
            "What does the Validade field of record PT-2026-004821, "
            "in the Componentes tab of Permissão de Trabalho mean?",
        ),
    ],
)
def test_determiners_keep_their_noun_and_pronouns_are_replaced(message, kind, rewritten):
    resolution = resolve(message, make_context())
    assert resolution.target.kind == kind
    assert resolution.rewritten_message == rewritten


def test_o_outro_is_the_visible_field_that_is_not_the_focus():
    context = make_context()
    context["viewport"]["visibleSemanticIds"] = [VALIDITY, START_DATE]
    resolution = resolve("E o outro?", context)
    assert resolution.target.semantic_id == START_DATE
    assert resolution.target.confidence == "high"
    assert resolution.rewritten_message == (
        "E o campo Data de Início do registro PT-2026-004821, na aba Componentes da Permissão de Trabalho?"
    )
    assert resolve("And the other one?", context).target.semantic_id == START_DATE


def test_o_outro_among_several_asks_which_one():
    resolution = resolve("Explique o outro.", make_context())  # type and start date are both visible
    assert resolution.status == "clarification"
    assert resolution.clarification.question == (
        "Você quer que eu explique o campo Tipo de Equipamento ou o campo Data de Início?"
    )


@pytest.mark.parametrize(
    ("message", "rewritten"),
    [
        (
            "O que significa o campo abaixo?",
            "O que significa o campo Data de Início do registro PT-2026-004821, na aba Componentes da Permissão de "
            "Trabalho?",
        ),
        (
            "Explain the field below.",
            "Explain the Data de Início field of record PT-2026-004821, in the Componentes tab of Permissão de "
            "Trabalho.",
        ),
        (
            "¿Qué es el campo de abajo?",
            "¿Qué es el campo Data de Início del registro PT-2026-004821, en la pestaña Componentes de Permissão de "
            "Trabalho?",
        ),
    ],
)
def test_a_noun_before_above_or_below_is_one_reference_with_it(message, rewritten):
    # Was "o campo no campo Data de Início…" / "the field in the Data de Início field…".
    assert resolve(message, make_context()).rewritten_message == rewritten


def test_this_before_a_preposition_is_the_pronoun_not_a_determiner():
    # Was "Change this to (the Validade field …) 30 days": "to" taken for the noun after "this".
    resolution = resolve("Change this to 30 days.", make_context())
    assert resolution.intent == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": 30, "unit": "days"}
    assert resolution.rewritten_message == (
        "Change the Validade field of record PT-2026-004821, in the Componentes tab of Permissão de Trabalho "
        "to 30 days."
    )
