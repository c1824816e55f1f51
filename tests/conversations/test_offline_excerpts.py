"""The offline provider on a first try: a whole relevant section, said to be an excerpt, never a bare header."""

import pytest
from django.conf import settings as django_settings

from llm.base import KnowledgeItem
from llm.offline import EXCERPT_NOTE, _focus, split_passages, terms
from conversations.models import Session
from tests.conversations.helpers import send

pytestmark = pytest.mark.django_db

SANGER_ROW = "| Sequenciamento Sanger (até 96 amostras) | 3 dias úteis | 1 dia útil |"


@pytest.fixture
def embedded_catalog(settings):
    """The catalog as the embedded app loads it (bundled + demo), with the knowledge router on."""
    from knowledge.services import catalog_sync_bundled

    settings.AGENT_KNOWLEDGE_ROUTER = True
    base = django_settings.BASE_DIR / "knowledge"
    catalog_sync_bundled(directories=[base / "catalog", base / "catalog_demo"])


def _ask(api_client, tenant, user, agents, question: str) -> dict:
    session = Session.objects.create(tenant=tenant, user=user, agent=agents["atendimento"])
    response = send(api_client, session, question)
    assert response.status_code == 201, response.content
    return response.json()


def _table_ends_on_a_bare_header(reply: str) -> bool:
    lines = reply.splitlines()
    return any(
        line.startswith("|---") and (i + 1 == len(lines) or not lines[i + 1].startswith("|"))
        for i, line in enumerate(lines)
    )


def test_the_sanger_urgency_question_gets_the_table_header_and_the_sanger_row(
    api_client, tenant, user, agents, embedded_catalog
):
    data = _ask(api_client, tenant, user, agents, "Qual o prazo do Sanger com urgência?")
    reply = data["reply"]
    assert reply.startswith(EXCERPT_NOTE + "\n\n")
    assert "## Prazos padrão\n\n| Serviço | Prazo padrão | Com urgência |\n|---|---|---|\n" + SANGER_ROW in reply
    assert "qPCR — painel padrão" not in reply  # the rows the question does not name stay out
    assert not _table_ends_on_a_bare_header(reply)
    assert reply.endswith("Fonte: Prazos de entrega (DELIVERY_TIMELINES)")


def test_the_scaffold_validity_question_quotes_the_section_with_the_scaffold_limit(
    api_client, tenant, user, agents, embedded_catalog
):
    data = _ask(api_client, tenant, user, agents, "Qual o prazo de validade do andaime?")
    reply = data["reply"]
    assert reply.startswith(EXCERPT_NOTE + "\n\n")
    assert "Andaimes: validade máxima de **30 dias**" in reply
    # the whole section, not one paragraph of it: the rule it depends on comes along
    assert "Quando a validade vence, o componente fica bloqueado" in reply
    assert reply.endswith("Fonte: Validade do componente (EQUIPMENT_VALIDITY)")


def test_a_header_naming_the_question_words_never_wins_over_the_rows():
    table = "| Serviço | Prazo padrão | Com urgência |\n|---|---|---|\n" + SANGER_ROW + "\n| qPCR | 7 dias | 4 dias |"
    focused = _focus(table, set(terms("Qual o prazo do Sanger com urgência?")))
    assert focused.splitlines() == table.splitlines()[:3]
    # no row named: the whole table, not the header alone
    assert _focus(table, set(terms("prazo com urgência"))) == table


def test_sections_run_from_a_heading_to_the_next():
    item = KnowledgeItem("P", "T", "# T\n\nIntro.\n\n## A\n\nOne.\n\n- two\n- three\n\n## B\n\nFour.")
    sections = [(p.heading_line, p.blocks) for p in split_passages(item)]
    assert sections == [("# T", ("Intro.",)), ("## A", ("One.", "- two\n- three")), ("## B", ("Four.",))]
