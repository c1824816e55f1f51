"""The demo's assistant against the live API in a real browser: the question
travels with the context on screen, deltas carry what changed, a new record
replaces the old one, and an oversized context never leaves the page."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

REPLIES = ".msg.agent, .msg.clarification, .msg.handoff"
# The work-permit domain (knowledge/catalog_demo/): what a question on the demo page may bring.
WORK_PERMIT_PACKAGES = {
    "WORK_PERMIT_OVERVIEW",
    "WORK_PERMIT_COMPONENTS",
    "EQUIPMENT_VALIDITY",
    "EQUIPMENT_START_DATE",
    "SCAFFOLD",
    "CRANE",
    "WORK_PERMIT_DOCUMENTS",
}


@pytest.fixture
def work_permit_catalog(transactional_db, settings):
    """The bundled catalog plus the demo's work-permit packages."""
    from knowledge.services import catalog_sync_bundled

    base = settings.BASE_DIR / "knowledge"
    settings.KNOWLEDGE_CATALOG_DIRS = [base / "catalog", base / "catalog_demo"]
    catalog_sync_bundled()
    # live_server tests flush the database between tests, data migrations included.
    from conversations.agents_seed import agents_seed_ensure

    agents_seed_ensure()


@pytest.fixture
def chat(demo, work_permit_catalog):
    return demo


def ask(page, text: str) -> dict:
    """Types a question, waits for the reply; returns its text and the request and response bodies."""
    before = page.locator(REPLIES).count()
    page.fill("#chat-input", text)
    page.press("#chat-input", "Enter")
    page.wait_for_function(
        f"document.querySelectorAll({json.dumps(REPLIES)}).length > {before}"
        " || !document.querySelector('#chat-error').hidden"
    )
    error = page.locator("#chat-error")
    assert error.is_hidden(), error.inner_text()
    request = message_posts(page)[-1]  # the last one: a retried message posts twice
    response = request.response()
    return {
        "text": page.locator(REPLIES).last.inner_text(),
        "request": request.post_data_json,
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


def in_chat_view(page, selector: str) -> bool:
    """True when the last element matching `selector` lies inside the visible part of the chat log."""
    return page.evaluate(
        """(selector) => {
            const found = document.querySelectorAll(selector);
            const box = found[found.length - 1].getBoundingClientRect();
            const log = document.querySelector("#chat-log").getBoundingClientRect();
            return box.top >= log.top - 1 && box.bottom <= log.bottom + 1;
        }""",
        selector,
    )


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
    assert turn["response"]["resolution"]["target"]["semanticId"] == "workPermit.components.equipment.validity"
    # First because the semantic registry links the focused field to it (not because of the words:
    # "Explique isso." names nothing); the router adds only work-permit packages around it.
    assert turn["response"]["packages"][0]["id"] == "EQUIPMENT_VALIDITY", turn["response"]
    assert {p["id"] for p in turn["response"]["packages"]} <= WORK_PERMIT_PACKAGES, turn["response"]
    # The offline provider quotes the validity package and names it.
    assert turn["response"]["reply"].startswith("Trecho do material de referência")  # said to be an excerpt
    assert "O campo **Validade**" in turn["response"]["reply"]
    reply = page.locator(".msg.agent").last
    assert reply.locator("h4.reply-heading").first.inner_text() == "Validade do componente"
    assert "Validade" in reply.locator("strong").all_inner_texts()
    assert "Fonte: Validade do componente (EQUIPMENT_VALIDITY)" in turn["text"]
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
    sent = second["request"]["context"]
    assert set(sent) == {"baseSnapshotId", "delta"}, "only what changed is sent"
    assert sent["baseSnapshotId"] == str(first["response"]["contextSnapshotId"])
    assert second["response"]["contextSnapshotId"] != first["response"]["contextSnapshotId"]
    delta = sent["delta"]
    assert delta["activeTabId"] == "components"
    assert delta["selection"]["entityId"] == "equipment-828"
    assert delta["focus"]["semanticId"] == "workPermit.components.equipment.startDate"
    seen = merge_patch(base, delta)
    assert seen["contextVersion"] > base["contextVersion"]
    assert seen["selection"] == {
        "entityType": "equipment",
        "entityId": "equipment-828",
        "displayName": "Guindaste GUI-0042",
    }
    assert second["response"]["packages"][0]["id"] == "EQUIPMENT_START_DATE", second["response"]
    assert "Fonte: Data de Início do componente (EQUIPMENT_START_DATE)" in second["text"]
    assert len(message_posts(page)) == 2


def test_selecting_another_record_does_not_reuse_the_old_one(chat):
    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    first = ask(page, "Explique este registro.")
    assert first["status"] == 201, first["response"]
    assert first["request"]["context"]["selection"]["entityId"] == "equipment-827"
    assert "Fonte: Andaime (SCAFFOLD)" in first["text"]

    page.click("#row-equipment-828")
    second = ask(page, "Explique este registro.")
    assert second["status"] == 201, second["response"]
    seen = merge_patch(first["request"]["context"], second["request"]["context"]["delta"])
    assert seen["selection"]["entityId"] == "equipment-828"
    assert "equipment-827" not in json.dumps(second["request"]), "the old record is not sent again"
    response = second["response"]
    assert response["recordChange"]["previous"]["entityId"] == "equipment-827"
    assert response["recordChange"]["current"]["entityId"] == "equipment-828"
    packages = [p["id"] for p in response["packages"]]
    assert packages[0] == "CRANE" and "SCAFFOLD" not in packages, response
    assert "guindaste" in response["reply"].lower() and "andaime" not in response["reply"].lower()
    # The page tells the user the record changed.
    assert "mudou de Andaime AND-0127 para Guindaste GUI-0042" in page.locator(".record-change").last.inner_text()
    assert in_chat_view(page, ".record-change"), "the note is scrolled into view, not cut off below the log"


def test_an_ambiguous_question_gets_a_clarifying_question_and_the_choice_is_asked_again(chat):
    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.keyboard.press("Escape")  # no focus: Validade and Data de Início are both on screen
    page.wait_for_function("() => !window.contextoDemo.agent.getState().focus")
    turn = ask(page, "Explique isso.")
    assert turn["response"]["status"] == "clarification"
    assert turn["text"].startswith("Você quer que eu explique o campo Validade ou o campo Data de Início?")
    before = len(message_posts(page))
    page.click(".msg.clarification button:text('Validade')")
    page.wait_for_function(f"document.querySelectorAll({json.dumps(REPLIES)}).length > 2")
    page.wait_for_function("document.querySelector('#chat-send').disabled === false")
    again = message_posts(page)[before]
    sent = again.post_data_json
    assert sent["message"] == "Explique isso."
    assert sent["context"]["delta"]["focus"]["semanticId"] == "workPermit.components.equipment.validity"
    # The answer quotes the validity package itself (the Data de Início one cites it too, as a link).
    assert again.response().json()["packages"][0]["id"] == "EQUIPMENT_VALIDITY"
    assert "Fonte: Validade do componente (EQUIPMENT_VALIDITY)" in page.locator(REPLIES).last.inner_text()


def test_an_unknown_base_snapshot_is_retried_once_with_the_whole_context(chat):
    from conversations.context.models import ContextSnapshot

    page = chat
    page.click("#field-number")
    first = ask(page, "Explique isso.")
    assert first["status"] == 201
    ContextSnapshot.objects.all().delete()  # e.g. pruned by retention: the base is gone

    page.click("#field-status")
    second = ask(page, "Explique isso.")
    posts = message_posts(page)
    assert len(posts) == 3, "the delta, then one retry"
    rejected, retried = posts[1], posts[2]
    assert set(rejected.post_data_json["context"]) == {"baseSnapshotId", "delta"}
    assert rejected.response().status == 409
    assert rejected.response().json()["error"]["code"] == "UNKNOWN_BASE_CONTEXT"
    whole = retried.post_data_json["context"]
    assert "baseSnapshotId" not in whole and whole["focus"]["semanticId"] == "workPermit.status"
    assert second["status"] == 201 and second["request"] == retried.post_data_json


def test_a_browser_clock_ten_minutes_behind_still_gets_answers(browser, live_server, demo_user, work_permit_catalog):
    import datetime as dt

    from django.test import Client

    client = Client()
    client.force_login(demo_user)
    context = browser.new_context(base_url=live_server.url)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.clock.install(time=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=10))
    posts = []
    page.on("request", lambda r: r.method == "POST" and r.url.endswith("/messages") and posts.append(r))
    page.goto("/demo/")
    page.wait_for_selector("html[data-demo-ready='true']")
    behind = dt.datetime.now(dt.UTC).timestamp() - page.evaluate("Date.now()") / 1000
    assert 540 < behind < 660, behind
    page.click("#field-number")
    page.fill("#chat-input", "Explique isso.")
    page.press("#chat-input", "Enter")
    page.wait_for_selector(".msg.agent >> nth=1")
    assert page.locator("#chat-error").is_hidden(), page.inner_text("#chat-error")
    captured = dt.datetime.fromisoformat(posts[-1].post_data_json["context"]["capturedAt"])
    assert abs((captured - dt.datetime.now(dt.UTC)).total_seconds()) < 60, "capture time taken from the server"
    assert posts[-1].response().status == 201
    context.close()


def test_the_focus_decides_which_package_answers_isso(chat):
    """The same words, three foci: each answer quotes the package the registry links to what the
    user is looking at (a tab, the page), not the one whose text merely repeats the context."""
    page = chat
    page.click("#tab-documents")
    documents = ask(page, "Explique isso.")
    assert documents["response"]["resolution"]["target"]["semanticId"] == "workPermit.documents.tab"
    # Delivered first because the registry links the tab to it. (Which passage the offline
    # provider then quotes is its own lexical choice: the page overview repeats the context words.)
    assert documents["response"]["packages"][0]["id"] == "WORK_PERMIT_DOCUMENTS", documents["response"]

    page.click("#tab-components")
    components = ask(page, "Explique isso.")
    assert components["response"]["packages"][0]["id"] == "WORK_PERMIT_COMPONENTS", components["response"]
    assert "Fonte: Componentes da PT (WORK_PERMIT_COMPONENTS)" in components["text"]

    page.click("h1")  # the page itself, while the Componentes tab is open
    whole = ask(page, "Explique isso.")
    assert whole["response"]["resolution"]["target"]["semanticId"] == "workPermit"
    assert whole["response"]["packages"][0]["id"] == "WORK_PERMIT_OVERVIEW", whole["response"]
    assert "Fonte: Permissão de Trabalho (PT) (WORK_PERMIT_OVERVIEW)" in whole["text"]
    for turn in (documents, components, whole):
        assert {p["id"] for p in turn["response"]["packages"]} <= WORK_PERMIT_PACKAGES, turn["response"]


def test_a_context_the_server_finds_too_big_is_not_reported_as_unsent(chat, settings):
    settings.CONTEXT_MAX_BYTES = 1024  # an operator's lower limit: the client's 5,120 lets it through
    page = chat
    page.fill("#chat-input", "Explique isso.")
    page.click("#chat-send")
    page.wait_for_selector("#chat-error:not([hidden])")
    error = page.inner_text("#chat-error")
    assert "Contexto grande demais" in error and "limite 1024" in error
    assert "O servidor recusou a mensagem" in error and "Nada foi enviado" not in error
    assert any(r.url.endswith("/messages") for r in page.api_requests)


def test_thumbs_rate_an_answer_once_per_user_and_can_change_their_mind(chat):
    from conversations.models import MessageFeedback

    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.click("#field-validity")
    turn = ask(page, "Explique isso.")
    assert turn["status"] == 201 and turn["response"]["status"] == "answered", turn["response"]
    message_id = turn["response"]["message_id"]
    up = page.locator(".msg.agent .thumb-up").last
    with page.expect_response(lambda r: r.url.endswith(f"/messages/{message_id}/feedback")) as first:
        up.click()
    assert first.value.status == 201
    page.wait_for_function(
        "document.querySelector('.msg.agent:last-child .thumb-up').getAttribute('aria-pressed') === 'true'"
    )
    with page.expect_response(lambda r: r.url.endswith("/feedback")) as second:
        page.locator(".msg.agent .thumb-down").last.click()
    assert second.value.status == 200
    (feedback,) = MessageFeedback.objects.filter(message_id=message_id)
    assert feedback.rating == "down"
