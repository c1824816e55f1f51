"""The demo's assistant against the live API in a real browser: the question
travels with the context on screen, deltas carry what changed, a new record
replaces the old one, and an oversized context never leaves the page."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_demo_page import demo, demo_user  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow

REPLIES = ".msg.agent, .msg.clarification, .msg.handoff"


@pytest.fixture
def work_permit_catalog(transactional_db, settings):
    """The bundled catalog plus the demo's work-permit packages."""
    from knowledge.services import catalog_sync_bundled

    base = settings.BASE_DIR / "knowledge"
    settings.KNOWLEDGE_CATALOG_DIRS = [base / "catalog", base / "catalog_demo"]
    catalog_sync_bundled()


@pytest.fixture
def chat(demo, work_permit_catalog):  # noqa: F811
    return demo


def ask(page, text: str) -> dict:
    """Types a question, waits for the reply; returns its text and the request and response bodies."""
    before = page.locator(REPLIES).count()
    with page.expect_response(lambda r: r.url.endswith("/messages") and r.request.method == "POST") as info:
        page.fill("#chat-input", text)
        page.press("#chat-input", "Enter")
    response = info.value
    page.wait_for_function(f"document.querySelectorAll({json.dumps(REPLIES)}).length > {before}")
    return {
        "text": page.locator(REPLIES).last.inner_text(),
        "request": response.request.post_data_json,
        "status": response.status,
        "response": response.json(),
    }


def merge_patch(target, patch):
    """RFC 7396, to rebuild the context the server saw from base + delta."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def message_posts(page) -> list:
    return [r for r in page.api_requests if r.method == "POST" and r.url.endswith("/messages")]


def test_focus_validade_and_explain_isso_answers_from_the_validity_package(chat, artifacts_dir):
    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.click("#field-validity")
    turn = ask(page, "Explique isso.")
    assert turn["status"] == 201, turn["response"]
    context = turn["request"]["context"]
    assert context["focus"]["semanticId"] == "workPermit.components.equipment.validity"
    assert context["focus"]["label"] == "Validade"
    assert context["activeTabId"] == "components"
    assert context["selection"]["entityId"] == "equipment-827"
    body = json.dumps(turn["request"], ensure_ascii=False)
    assert "<" not in body and "innerHTML" not in body, "no DOM or HTML leaves the page"
    assert len(json.dumps(context, ensure_ascii=False, separators=(",", ":")).encode()) <= 5120
    # The answer comes from the validity package (the offline provider quotes it and names it).
    packages = [p["id"] for p in turn["response"]["packages"]]
    assert "EQUIPMENT_VALIDITY" in packages, turn["response"]
    assert "dias" in turn["text"] and "validade" in turn["text"].lower()
    page.screenshot(path=str(artifacts_dir / "demo-chat-validity.png"), full_page=True)


def test_switching_tab_and_component_reaches_the_next_request(chat):
    page = chat
    page.click("#field-number")
    first = ask(page, "Explique isso.")
    assert first["status"] == 201, first["response"]
    base = first["request"]["context"]
    assert base["activeTabId"] == "general"
    assert base["focus"]["semanticId"] == "workPermit.number"

    page.click("#tab-components")
    page.click("#row-equipment-828")
    page.click("#field-start")
    second = ask(page, "Explique isso.")
    assert second["status"] == 201, second["response"]
    request = second["request"]
    assert "context" not in request, "only what changed is sent"
    assert request["baseSnapshotId"] == first["response"]["contextSnapshotId"]
    delta = request["delta"]
    assert delta["activeTabId"] == "components"
    assert delta["selection"]["entityId"] == "equipment-828"
    assert delta["focus"]["semanticId"] == "workPermit.components.equipment.startDate"
    seen = merge_patch(base, delta)
    assert seen["contextVersion"] > base["contextVersion"]
    assert seen["selection"] == {"entityType": "equipment", "entityId": "equipment-828", "displayName": "Guindaste GUI-0042"}
    assert "EQUIPMENT_START_DATE" in [p["id"] for p in second["response"]["packages"]], second["response"]
    assert len(message_posts(page)) == 2


def test_selecting_another_record_does_not_reuse_the_old_one(chat):
    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    first = ask(page, "Explique este registro.")
    assert first["status"] == 201, first["response"]
    assert "Andaime" in first["text"] or "andaime" in first["text"].lower()

    page.click("#row-equipment-828")
    second = ask(page, "Explique este registro.")
    assert second["status"] == 201, second["response"]
    seen = merge_patch(first["request"].get("context") or {}, second["request"].get("delta") or second["request"].get("context"))
    assert seen["selection"]["entityId"] == "equipment-828"
    assert "equipment-827" not in json.dumps(second["request"]), "the old record is not sent again"
    packages = [p["id"] for p in second["response"]["packages"]]
    assert "CRANE" in packages and "SCAFFOLD" not in packages, second["response"]
    assert "guindaste" in second["text"].lower()
