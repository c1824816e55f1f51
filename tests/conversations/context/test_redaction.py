import copy

import pytest

from conversations.context import MASK, redact_context

from .samples import VALIDITY, make_context


def _context_with_fields(fields):
    context = make_context()
    context["selection"]["fields"] = fields
    return context


@pytest.mark.parametrize(
    "key",
    [
        "cpf", "CPF", "cnpj", "rg", "email", "e-mail", "E_MAIL", "userEmail", "telefone", "phone", "phoneNumber",
        "celular", "endereço", "Endereço residencial", "address", "salário", "salary", "password", "senha",
        "token", "accessToken", "api_key", "dataNascimento",
    ],
)  # fmt: skip
def test_sensitive_keys_lose_their_whole_value(key):
    redacted, paths = redact_context(_context_with_fields({key: "anything at all", "status": "aprovada"}))
    assert redacted["selection"]["fields"][key] == MASK
    assert redacted["selection"]["fields"]["status"] == "aprovada"
    assert f"selection.fields.{key}" in paths


def test_sensitive_keys_mask_structured_values_too():
    redacted, _ = redact_context(_context_with_fields({"address": {"street": "Rua A", "number": 10}}))
    assert redacted["selection"]["fields"]["address"] == MASK


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("CPF do executante: 123.456.789-09", "cpf"),
        ("documento 12345678909 anexado", "cpf"),
        ("Fornecedor 12.345.678/0001-95", "cnpj"),
        ("CNPJ 12345678000195", "cnpj"),
        ("escreva para maria.silva@acme.com.br", "email"),
        ("ligue (11) 98765-4321", "phone"),
        ("ligue 11 98765-4321", "phone"),
        ("ligue +55 11 98765-4321", "phone"),
        ("call +1 415-555-0100", "phone"),
    ],
)
def test_sensitive_values_are_masked_inside_free_text(text, kind):
    context = make_context()
    context["selection"]["displayName"] = text
    redacted, paths = redact_context(context)
    assert MASK in redacted["selection"]["displayName"]
    assert "selection.displayName" in paths


@pytest.mark.parametrize(
    "text",
    [
        "PT-2026-004821",
        "2026-09-05",
        "8.14.2",
        "30 dias",
        "R$ 1.234,56",
        "Andaime tubular 2,5 m",
        "equipment-827",
        "v2026.09",
    ],
)
def test_ordinary_values_are_not_mistaken_for_personal_data(text):
    context = make_context()
    context["selection"]["displayName"] = text
    redacted, paths = redact_context(context)
    assert redacted["selection"]["displayName"] == text
    assert paths == []


def test_identifiers_are_never_pattern_scanned():
    context = make_context()
    context["selection"]["entityId"] = "12345678909"  # would look like a CPF
    context["navigation"]["params"] = {"id": "12345678909"}
    redacted, _ = redact_context(context)
    assert redacted["selection"]["entityId"] == "12345678909"
    assert redacted["navigation"]["params"]["id"] == "12345678909"
    assert redacted["focus"]["semanticId"] == VALIDITY


def test_the_value_of_a_focused_sensitive_field_is_masked():
    context = make_context()
    context["focus"] = {"semanticId": "employee.cpf", "type": "field", "label": "CPF", "value": "somente texto"}
    redacted, paths = redact_context(context)
    assert redacted["focus"]["value"] == MASK
    assert "focus.value" in paths
    context["focus"] = {"semanticId": "employee.contact", "type": "field", "label": "Telefone", "value": 11987654321}
    assert redact_context(context)[0]["focus"]["value"] == MASK


def test_the_key_list_is_configurable():
    context = _context_with_fields({"matricula": "A-77", "cpf": "x"})
    redacted, _ = redact_context(context, sensitive_keys=["matricula"])
    assert redacted["selection"]["fields"] == {"matricula": MASK, "cpf": "x"}


def test_the_input_is_not_modified():
    context = _context_with_fields({"cpf": "123.456.789-09"})
    before = copy.deepcopy(context)
    redact_context(context)
    assert context == before


def test_metadata_and_route_are_scanned():
    context = make_context()
    context["page"]["metadata"] = {"owner": "joao@acme.com"}
    context["navigation"]["route"] = "/employees/123.456.789-09"
    redacted, _ = redact_context(context)
    assert redacted["page"]["metadata"]["owner"] == MASK
    assert redacted["navigation"]["route"] == f"/employees/{MASK}"


def test_route_params_naming_an_entity_are_identifiers_other_params_are_scanned():
    # The authorizer checks <type>Id / <type>_id params again when a delta is applied to the
    # stored base: masking them turned a legitimate delta into a 403.
    context = make_context()
    context["navigation"]["params"] = {
        "workPermitId": "12345678909",
        "address_id": "77",
        "note": "ligar 123.456.789-09",
        "mail": "x",
    }
    redacted, _ = redact_context(context)
    assert redacted["navigation"]["params"] == {
        "workPermitId": "12345678909",
        "address_id": "77",
        "note": f"ligar {MASK}",
        "mail": MASK,
    }
    context["page"]["metadata"] = {"workPermitId": "12345678909"}  # only route params are entities
    assert redact_context(context)[0]["page"]["metadata"]["workPermitId"] == MASK
