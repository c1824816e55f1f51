from conversations.context import MASK, build_prompt_context, redact_context, resolve, semantic_context

from .samples import START_DATE, VALIDITY, make_context


def _prompt(message, context):
    redacted, _ = redact_context(context)
    return build_prompt_context(redacted, resolve(message, redacted))


def _sensitive_context():
    context = make_context()
    context["selection"]["fields"] = {
        "executante": "Maria Souza",
        "cpf": "123.456.789-09",
        "telefone": "(11) 98765-4321",
        "salario": "R$ 7.500,00",
        "observacao": "Contato: maria@acme.com",
    }
    context["page"]["metadata"] = {"owner": "joao@acme.com", "internalCode": "XPTO-9"}
    return context


def test_prompt_has_page_tab_target_parents_and_record_name():
    prompt = _prompt("Explique isso.", make_context())
    assert "Page: Permissão de Trabalho" in prompt
    assert "Tab: Componentes" in prompt
    assert 'Target: field "Validade"' in prompt
    assert "Inside: Equipamento > Componentes > Permissão de Trabalho" in prompt
    assert "Selected record: PT-2026-004821" in prompt


def test_selection_fields_and_metadata_never_reach_the_prompt():
    prompt = _prompt("Qual é a validade?", _sensitive_context())
    for leaked in ("Maria Souza", "123.456.789-09", "98765-4321", "7.500", "maria@acme.com", "joao@acme.com", "XPTO-9"):
        assert leaked not in prompt
    assert MASK not in prompt


def test_the_focused_value_is_sent_only_when_the_question_is_about_it():
    assert "Current value of the target: 15 dias" in _prompt("Qual é a validade?", make_context())
    assert "Current value of the target: 15 dias" in _prompt("Esse valor está correto?", make_context())
    assert "15 dias" not in _prompt("Explique isso.", make_context())


def test_a_redacted_focused_value_is_never_sent():
    context = make_context()
    context["focus"] = {
        "semanticId": "employee.phone",
        "type": "field",
        "label": "Telefone",
        "value": "(11) 98765-4321",
    }
    prompt = _prompt("Qual é o valor deste campo?", context)
    assert "98765" not in prompt and MASK not in prompt


def test_a_redacted_display_name_falls_back_to_the_entity_reference():
    context = make_context()
    context["selection"]["displayName"] = "Maria (maria@acme.com)"
    prompt = _prompt("Explique isso.", context)
    assert "maria@acme.com" not in prompt and MASK not in prompt
    assert "Selected record: workPermit 4821" in prompt


def test_the_value_of_another_field_than_the_focus_is_not_sent():
    prompt = _prompt("Qual é a Data de Início?", make_context())
    assert START_DATE in prompt
    assert "15 dias" not in prompt


def test_route_params_user_and_timestamps_are_not_in_the_prompt():
    prompt = _prompt("Explique isso.", make_context())
    for absent in ("/work-permits/4821", "America/Sao_Paulo", "2026-09-05", "8.14.2"):
        assert absent not in prompt


def test_semantic_context_for_the_router_is_focus_parents_and_page():
    context = make_context()
    assert semantic_context(context, resolve("Explique isso.", context)) == {
        "focus": VALIDITY,
        "parent_ids": ["workPermit.components.equipment", "workPermit.components", "workPermit"],
        "page": "workPermit",
    }
    named = semantic_context(context, resolve("O que é a Data de Início?", context))
    assert named["focus"] == START_DATE
