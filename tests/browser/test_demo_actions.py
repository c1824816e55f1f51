"""Seed §38 in Chromium on the demo: focus Validade on Andaime, "Altere isso para 30 dias.",
a preview that changes nothing, "Aplicar" confirms it, the page applies it through its
onAction handler, the server verifies the next snapshot, the table shows 30 and the agent
says so — only then."""

from __future__ import annotations

import pytest

from tests.browser.test_demo_chat import ask, in_chat_view, work_permit_catalog  # noqa: F401

pytestmark = pytest.mark.slow

VALIDITY = "workPermit.components.equipment.validity"


@pytest.fixture
def demo_capabilities(transactional_db, settings):
    from actions.registry import capability_registry_import

    path = settings.BASE_DIR / "actions" / "demo" / "capabilities.yaml"
    capability_registry_import(acting_user=None, text=path.read_text(encoding="utf-8"))


@pytest.fixture
def chat(demo, work_permit_catalog, demo_capabilities):  # noqa: F811
    return demo


def action_posts(page, step: str) -> list:
    return [r for r in page.api_requests if r.method == "POST" and r.url.endswith(f"/{step}")]


def test_seed_38_change_validity_to_30_days_end_to_end(chat, artifacts_dir):
    from actions.models import Action, ActionAudit

    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.click("#field-validity")
    assert page.inner_text("#row-equipment-827 .cell-validity") == "20 dias"

    turn = ask(page, "Altere isso para 30 dias.")
    assert turn["status"] == 201, turn["response"]
    sent = turn["request"]["context"]
    assert sent["focus"]["semanticId"] == VALIDITY
    assert sent["selection"] == {
        "entityType": "equipment",
        "entityId": "equipment-827",
        "displayName": "Andaime AND-0127",
    }
    response = turn["response"]
    assert response["intent"] == {"intent": "UPDATE_FIELD", "target": VALIDITY, "value": 30, "unit": "days"}
    action = response["action"]
    assert (action["capability"], action["status"]) == ("workPermit.equipment.updateValidity", "needs_confirmation")
    assert turn["text"].startswith(
        "Vou alterar o campo Validade de Andaime AND-0127 de 20 dias para 30 dias. Confirma?"
    )
    # The preview changed nothing, on the page or on the server.
    assert page.inner_text("#row-equipment-827 .cell-validity") == "20 dias"
    assert page.input_value("#field-validity") == "20"
    assert Action.objects.get(pk=action["id"]).status == "needs_confirmation"
    assert in_chat_view(page, ".msg .apply"), "the preview's button is in view without scrolling"

    page.click(".msg .apply")
    page.wait_for_selector(".msg.action-result")
    result = page.locator(".msg.action-result").last.inner_text()
    assert result.startswith("A validade do equipamento foi alterada para 30 dias."), result
    assert page.inner_text("#row-equipment-827 .cell-validity") == "30 dias"
    assert page.input_value("#field-validity") == "30"
    assert "changed" in (page.get_attribute("#row-equipment-827", "class") or "")
    assert page.inner_text(".msg .apply") == "Aplicado"

    (confirm,) = action_posts(page, "confirm")
    assert confirm.response().json()["status"] == "confirmed"
    (report,) = action_posts(page, "report")
    body = report.post_data_json
    assert body["value"] == 30
    assert (body["context"]["focus"]["semanticId"], body["context"]["focus"]["value"]) == (VALIDITY, "30 dias")
    assert report.response().json()["status"] == "verified"
    assert Action.objects.get(pk=action["id"]).status == "verified"
    assert [a.step for a in ActionAudit.objects.filter(action_id=action["id"]).order_by("id")] == [
        "proposed", "previewed", "confirmed", "executed", "verified",
    ]  # fmt: skip
    page.screenshot(path=str(artifacts_dir / "demo-action-verified.png"), full_page=True)

    # The conversation goes on from the reported snapshot: the next message is a delta against it.
    after = ask(page, "Explique isso.")
    assert after["status"] == 201, after["response"]
    assert after["request"]["context"]["baseSnapshotId"] == str(report.response().json()["contextSnapshotId"])


def test_a_date_field_asks_for_a_date_instead_of_applying_30_dias(chat):
    from actions.models import Action

    page = chat
    page.click("#tab-components")
    page.click("#row-equipment-827")
    page.click("#field-start")
    turn = ask(page, "Altere isso para 30 dias.")
    assert turn["response"]["status"] == "clarification"
    assert turn["text"].startswith("O campo Data de Início recebe uma data (AAAA-MM-DD")
    assert page.locator(".msg .apply").count() == 0
    assert page.inner_text("#row-equipment-827 .cell-start") == "01/09/2026"
    assert Action.objects.get().status == "denied"
