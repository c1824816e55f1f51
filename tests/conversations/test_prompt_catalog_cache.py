"""The catalog part of a prompt is built once per catalog version, not on every model call."""

import pytest

from conversations.models import Agent
from conversations.prompts import KnowledgeSet, build_call
from knowledge.catalog import get_active_catalog
from knowledge.models import Package
from knowledge.services import package_update

pytestmark = pytest.mark.django_db


def call(agent, catalog):
    return build_call(
        agent=agent,
        catalog=catalog,
        knowledge_set=KnowledgeSet(),
        collected_ids=[],
        history=[],
        user_text="oi",
        budget=2,
    )


def prompt(prepared) -> str:
    return prepared.request.messages[0].content


def test_the_catalog_part_is_reused_until_the_catalog_changes(agents, catalog, curator):
    agent = Agent.objects.get(slug="atendimento")
    first, second = call(agent, get_active_catalog()), call(agent, get_active_catalog())
    assert second.request.catalog is first.request.catalog
    assert prompt(second) == prompt(first)

    package = Package.objects.get(package_id="PRICING_RULES")
    package_update(
        acting_user=curator, package=package, data={**package.content(), "summary": "Tabela de preços revista."}
    )
    third = call(agent, get_active_catalog())
    assert third.request.catalog is not first.request.catalog
    assert "Tabela de preços revista." in prompt(third)
    assert "Tabela de preços revista." not in prompt(first)
