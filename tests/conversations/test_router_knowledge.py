"""The turn with the knowledge router on: bodies delivered without a fetch,
listed packages offered by name, fetch feedback, graceful degradation."""

import pytest

from knowledge.catalog import get_active_catalog
from knowledge.models import FetchFeedback
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def with_router(settings):
    settings.AGENT_KNOWLEDGE_ROUTER = True


def test_router_delivers_bodies_without_a_fetch(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 0, "message": "ok"})

    data = send(api_client, chat_session, "Qual a concentração mínima de plasmídeo para Sanger?").json()

    assert data["status"] == "answered"
    delivered = [p["id"] for p in data["packages"]]
    assert "SAMPLE_INSTRUCTIONS" in delivered
    prompt = scripted_llm.requests[0].system_prompt
    assert "## Knowledge for this message" in prompt
    body_line = get_active_catalog().get("SAMPLE_INSTRUCTIONS").body.strip().splitlines()[-1]
    assert body_line in prompt
    chat_session.refresh_from_db()
    assert chat_session.collected_packages == []  # delivered by the router, not fetched


def test_fetch_of_a_listed_package_teaches_the_router(api_client, chat_session, scripted_llm):
    scripted_llm.reply_json({"s": 0, "message": "primeiro"})
    send(api_client, chat_session, "Qual a concentração mínima de plasmídeo para Sanger?")
    listed = scripted_llm.requests[0].system_prompt.split("## Also relevant (not loaded; ask with s=99 if needed)\n")
    assert len(listed) == 2, "the router listed some packages"
    listed_id = listed[1].splitlines()[0].removeprefix("- ").removeprefix("::").split(" ")[0]
    scripted_llm.reply_json({"s": 99, "context_needed": listed_id}).reply_json({"s": 0, "message": "ok"})

    send(api_client, chat_session, "E o resto?")

    assert FetchFeedback.objects.filter(package_id=listed_id).exists()


def test_a_failing_router_degrades_to_the_catalog_alone(api_client, chat_session, scripted_llm, monkeypatch):
    from conversations.services.turns import knowledge_step

    def broken(**kwargs):
        raise ConnectionError("cache down")

    monkeypatch.setattr(knowledge_step, "route_context", broken)
    scripted_llm.reply_json({"s": 0, "message": "ok"})

    data = send(api_client, chat_session, "Preço?").json()

    assert (data["status"], data["packages"]) == ("answered", [])
    assert "## Knowledge for this message" not in scripted_llm.requests[0].system_prompt


def test_offline_answer_quotes_the_package_that_holds_the_answer(api_client, chat_session, settings):
    # PRIMERS_SANGER only points at [[DELIVERY_TIMELINES]] for the turnaround; the
    # offline provider must quote the table row, not the pointer.
    from django.conf import settings as django_settings

    from knowledge.services import catalog_sync_bundled

    settings.LLM_PROVIDER = "offline"
    base = django_settings.BASE_DIR / "knowledge"
    catalog_sync_bundled(directories=[base / "catalog", base / "catalog_demo"])  # as in the embedded app

    data = send(api_client, chat_session, "Qual o prazo do Sanger?").json()

    assert data["status"] == "answered"
    assert "3 dias úteis" in data["reply"]
    assert "(DELIVERY_TIMELINES)" in data["reply"]
