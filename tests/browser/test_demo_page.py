"""The demo page in a real browser: the semantic context follows the user,
nothing leaves the page before the user asks, and the context sent with a
question is the one on screen (seed PRD-002 §26–§29, §35–§39)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow


def state(page) -> dict:
    return page.evaluate("() => window.contextoDemo.agent.getState()")


def snapshot(page) -> dict:
    return page.evaluate("() => window.contextoDemo.agent.snapshot()")


def test_demo_page_renders_the_work_permit_and_declares_its_context(demo, artifacts_dir):
    page = demo
    assert page.inner_text("h1") == "Permissão de Trabalho PT-2026-004821"
    assert [t.inner_text() for t in page.query_selector_all("[role=tab]")] == ["Geral", "Componentes", "Documentos"]
    snap = snapshot(page)
    assert snap["page"] == {
        "id": "workPermit.details",
        "type": "details",
        "title": "Permissão de Trabalho PT-2026-004821",
        "semanticId": "workPermit",
    }
    assert snap["navigation"]["params"] == {"id": "4821"}
    assert snap["activeTabId"] == "general"
    assert snap["selection"] == {"entityType": "workPermit", "entityId": "4821", "displayName": "PT-2026-004821"}
    visibility = {e["semanticId"]: e["visibility"] for e in snap["elements"]}
    assert visibility["workPermit.number"] == "visible"
    assert visibility["workPermit.components.equipment.validity"] == "inactive"
    assert visibility["workPermit.history.issuedAt"] == "collapsed"
    assert visibility["workPermit.release"] == "disabled"
    assert page.get_attribute("#field-validity >> xpath=..", "data-agent-visibility") == "inactive"
    assert len(json.dumps(snap, ensure_ascii=False).encode()) < 5120
    page.screenshot(path=str(artifacts_dir / "demo-work-permit.png"), full_page=True)
    assert page.api_requests == [], "nothing is sent before the user talks"
    assert page.console_errors == [], "a clean console on load (no missing asset, no favicon 404)"


def test_keyboard_navigation_moves_the_semantic_focus(demo):
    page = demo
    page.click("#field-number")
    assert state(page)["focus"]["semanticId"] == "workPermit.number"
    page.keyboard.press("Tab")
    assert state(page)["focus"]["semanticId"] == "workPermit.status"
    page.keyboard.press("Tab")
    assert state(page)["focus"]["semanticId"] == "workPermit.site"
    assert state(page)["focus"]["parentIds"] == ["workPermit", "workPermit.general"]
    # Arrow keys on the tab list switch tabs; the focus follows to the tab.
    page.click("#tab-general")
    page.keyboard.press("ArrowRight")
    current = state(page)
    assert current["activeTabId"] == "components"
    assert current["focus"]["semanticId"] == "workPermit.components.tab"
    assert page.api_requests == []


def test_hidden_collapsed_and_disabled_elements_never_become_the_focus(demo):
    page = demo
    page.click("#field-site")
    page.click("#release", force=True)  # disabled button
    assert state(page)["focus"]["semanticId"] == "workPermit.site"
    page.click("#history summary")  # opening the <details> makes its field visible
    page.click("#field-issued-at")
    assert state(page)["focus"]["semanticId"] == "workPermit.history.issuedAt"
    page.click("#history summary")  # closing it drops the focus inside it
    page.wait_for_function(
        "() => !window.contextoDemo.agent.getState().focus || "
        "window.contextoDemo.agent.getState().focus.semanticId !== 'workPermit.history.issuedAt'"
    )
    page.click("#tab-components")
    page.click("#field-validity", force=True)  # disabled until a component is selected
    assert state(page)["focus"]["semanticId"] == "workPermit.components.tab"
    page.click("#row-equipment-827")
    page.click("#field-validity")
    focus = state(page)["focus"]
    assert focus["semanticId"] == "workPermit.components.equipment.validity"
    assert focus["value"] == "20 dias"


def test_an_oversized_context_is_refused_before_any_request(demo):
    page = demo
    page.evaluate(
        "() => window.contextoDemo.agent.setPage({id: 'workPermit.details', type: 'details', "
        "title: 'Permissão '.repeat(700)})"
    )
    page.fill("#chat-input", "Explique isso.")
    page.click("#chat-send")
    page.wait_for_selector("#chat-error:not([hidden])")
    assert "Contexto grande demais" in page.inner_text("#chat-error")
    assert "Nada foi enviado" in page.inner_text("#chat-error")
    page.wait_for_timeout(200)
    assert page.api_requests == [], "no request at all, not even the session"


def test_escape_clears_the_focus_wherever_the_dom_focus_is(demo):
    page = demo
    page.click("h1")  # plain text: the DOM focus stays on the body, the semantic focus is the page
    assert state(page)["focus"]["semanticId"] == "workPermit"
    assert page.evaluate("document.activeElement === document.body")
    page.keyboard.press("Escape")
    assert state(page).get("focus") is None
    # Escape while typing to the assistant leaves what the user looks at alone.
    page.click("#field-site")
    page.click("#chat-input")
    page.keyboard.press("Escape")
    assert state(page)["focus"]["semanticId"] == "workPermit.site"


def test_a_narrow_screen_scrolls_the_components_table_not_the_page(demo):
    page = demo
    page.set_viewport_size({"width": 400, "height": 860})
    page.click("#tab-components")
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths}"
    page.click("#row-equipment-827")
    assert state(page)["selection"]["entityId"] == "equipment-827"
