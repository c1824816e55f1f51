import pytest

from conversations.context import AGENT_CONTEXT_SCHEMA, ContextValidationError, validate_context_schema
from conversations.context import schema as schema_module

from .samples import make_context


def _errors(context):
    with pytest.raises(ContextValidationError) as excinfo:
        validate_context_schema(context)
    assert excinfo.value.code == "INVALID_CONTEXT"
    assert excinfo.value.status_code == 400
    return excinfo.value.details["errors"]


def test_the_sample_work_permit_context_is_valid():
    validate_context_schema(make_context())


def test_a_minimal_context_with_only_the_required_members_is_valid():
    validate_context_schema(
        {
            "application": {"applicationId": "sst"},
            "navigation": {"route": "/"},
            "page": {"id": "home", "type": "dashboard", "title": "Início"},
            "user": {},
            "timestamp": "2026-09-05T12:00:00Z",
            "contextVersion": 0,
        }
    )


def test_unknown_top_level_key_is_named():
    errors = _errors(make_context(dom="<div>…</div>"))
    assert {"field": "dom", "message": "unknown field"} in errors


def test_unknown_nested_key_is_named_with_its_path():
    context = make_context()
    context["focus"]["html"] = "<input>"
    context["tabs"][1]["color"] = "red"
    fields = [e["field"] for e in _errors(context)]
    assert "focus.html" in fields
    assert "tabs[1].color" in fields


def test_wrong_type_names_the_field():
    context = make_context(contextVersion="7")
    assert _errors(context)[0] == {"field": "contextVersion", "message": "must be of type integer"}


def test_bad_enums_name_the_field():
    context = make_context()
    context["focus"]["type"] = "widget"
    context["application"]["environment"] = "prod"
    context["elements"][0]["visibility"] = "invisible"
    fields = {e["field"] for e in _errors(context)}
    assert fields == {"focus.type", "application.environment", "elements[0].visibility"}


def test_missing_required_members_are_named():
    context = make_context(drop=("page", "capturedAt"))
    del context["selection"]["entityId"]
    fields = {e["field"] for e in _errors(context)}
    assert {"page", "capturedAt", "selection.entityId"} <= fields


def test_timestamp_is_accepted_in_place_of_captured_at():
    context = make_context(drop=("capturedAt",), timestamp="2026-09-05T11:59:50Z")
    validate_context_schema(context)


def test_semantic_ids_must_be_dotted_identifiers():
    context = make_context()
    context["focus"]["semanticId"] = "div > input#validity"
    assert _errors(context)[0]["field"] == "focus.semanticId"


def test_route_params_must_be_strings():
    context = make_context()
    context["navigation"]["params"] = {"id": 4821}
    assert _errors(context)[0]["field"] == "navigation.params.id"


def test_the_message_names_the_first_field():
    with pytest.raises(ContextValidationError) as excinfo:
        validate_context_schema(make_context(dom="x"))
    assert excinfo.value.message == "Context field 'dom' unknown field."


def test_a_non_object_context_is_rejected():
    _errors(["not", "an", "object"])


def test_every_object_in_the_published_schema_is_closed():
    def walk(node, path):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, path
            for key, value in node.items():
                walk(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(AGENT_CONTEXT_SCHEMA, "$")


def test_the_compiled_fast_path_agrees_with_the_reference_validator():
    mutations = [
        lambda c: c.update(dom="x"),
        lambda c: c.update(contextVersion=-1),
        lambda c: c["focus"].update(type="widget"),
        lambda c: c["focus"].update(semanticId="a b"),
        lambda c: c["focus"].update(value={"nested": 1}),
        lambda c: c["tabs"][0].update(index="0"),
        lambda c: c["selection"].pop("entityType"),
        lambda c: c["viewport"].update(visibleSemanticIds=["ok"] * 101),
        lambda c: c["navigation"].update(params={"id": 1}),
        lambda c: c.pop("capturedAt"),
        lambda c: c["page"].update(title=""),
    ]
    for mutate in [lambda c: None, *mutations]:
        context = make_context()
        mutate(context)
        reference = schema_module._VALIDATOR.is_valid(context)
        try:
            schema_module._FAST_IS_VALID(context)
            fast = True
        except Exception:
            fast = False
        assert fast == reference


def test_a_context_version_beyond_the_stored_integer_is_named():
    # The snapshot's version column is a 32-bit integer; a larger one used to pass the schema
    # and fail later as a VALIDATION_ERROR on the model field "version", not the context field.
    assert _errors(make_context(contextVersion=2**31)) == [
        {"field": "contextVersion", "message": "violates maximum 2147483647"}
    ]
    validate_context_schema(make_context(contextVersion=2**31 - 1))
