"""Properties of the resolver over generated contexts and messages: never a crash, never a hidden target."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conversations.context import build_prompt_context, resolve, validate_context_schema
from conversations.context import vocabulary as V
from conversations.context.resolver import ContextView

from .samples import EQUIPMENT_TYPE, START_DATE, VALIDITY, make_context

IDS = [VALIDITY, START_DATE, EQUIPMENT_TYPE, "workPermit.documents.attachments", "workPermit.components.equipment"]
STATES = ["visible", "hidden", "collapsed", "inactive", "disabled"]
WORDS = sorted(V.DEICTICS) + ["explique", "altere", "para", "30", "dias", "validade", "data de início", "?", "."]

messages = st.lists(st.sampled_from(WORDS) | st.text(max_size=12), min_size=0, max_size=8).map(" ".join)


@st.composite
def contexts(draw):
    context = make_context()
    for optional in ("focus", "selection", "viewport", "elements", "tabs"):
        if draw(st.booleans()):
            context.pop(optional, None)
    if "tabs" not in context:
        context.pop("activeTabId", None)
    for element in context.get("elements", []):
        element["visibility"] = draw(st.sampled_from(STATES))
    if "focus" in context:
        context["focus"]["semanticId"] = draw(st.sampled_from(IDS))
        context["focus"]["visibility"] = draw(st.sampled_from(STATES))
        if draw(st.booleans()):
            context["focus"].pop("label")
    if "viewport" in context:
        context["viewport"]["visibleSemanticIds"] = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=5))
        context["viewport"]["topVisibleElement"] = draw(st.sampled_from(IDS))
    validate_context_schema(context)
    return context


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(context=contexts(), message=messages)
def test_resolution_never_crashes_and_never_targets_a_hidden_element(context, message):
    resolution = resolve(message, context)
    view = ContextView(context)
    if resolution.target is not None and resolution.target.kind == "element":
        assert view.is_targetable(view.element(resolution.target.semantic_id))
    if resolution.clarification is not None:
        assert resolution.target is None and resolution.intent is None
        for option in resolution.clarification.options:
            assert view.is_targetable(view.element(option.semantic_id))
    if resolution.intent is not None:
        assert resolution.intent["target"] == resolution.target.semantic_id
    assert isinstance(build_prompt_context(context, resolution), str)
