"""Fixtures for the action chain: the demo's capabilities, an equipment record, a session."""

from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import Membership
from accounts.services import api_token_create
from actions.models import Capability
from actions.registry import capability_registry_import
from conversations.agents_seed import agents_seed_ensure
from conversations.context.models import AccessibleEntity
from conversations.models import Agent, Session
from tests.conversations.context.samples import make_context
from tests.support.webhook_server import webhook_server  # noqa: F401

VALIDITY = "workPermit.components.equipment.validity"
START_DATE = "workPermit.components.equipment.startDate"
DEMO_CAPABILITIES = Path(django_settings.BASE_DIR) / "actions" / "demo" / "capabilities.yaml"
WEBHOOK_SECRET = "test-webhook-secret"


@pytest.fixture
def capabilities(db):
    capability_registry_import(acting_user=None, text=DEMO_CAPABILITIES.read_text(encoding="utf-8"))
    return {c.capability_id: c for c in Capability.objects.all()}


@pytest.fixture
def equipment(tenant):
    """The tenant may see work permit 4821 and its scaffold equipment-827."""
    AccessibleEntity.objects.create(tenant=tenant, entity_type="workPermit", entity_id="4821")
    AccessibleEntity.objects.create(tenant=tenant, entity_type="equipment", entity_id="equipment-827")


@pytest.fixture
def chat_session(user, tenant, db):
    agents_seed_ensure()
    return Session.objects.create(tenant=tenant, user=user, agent=Agent.objects.get(slug="atendimento"))


@pytest.fixture
def webhook_capability(capabilities, webhook_server, settings):  # noqa: F811
    settings.ACTIONS_WEBHOOK_SECRET = WEBHOOK_SECRET
    capability = capabilities["workPermit.equipment.updateValidity"]
    capability.execution = "webhook"
    capability.webhook_url = webhook_server.url
    capability.webhook_timeout_seconds = 0.5
    capability.full_clean()
    capability.save()
    return capability


def equipment_context(*, focus=VALIDITY, label="Validade", value="20 dias", version=7, entity="equipment-827"):
    """Seed §38: Components tab, Andaime selected, focus on Validade; captured now."""
    context = make_context(
        selection={"entityType": "equipment", "entityId": entity, "displayName": "Andaime AND-0127"},
        focus={
            "semanticId": focus,
            "type": "field",
            "label": label,
            "parentIds": ["workPermit", "workPermit.components", "workPermit.components.equipment"],
            **({"value": value} if value is not None else {}),
        },
        contextVersion=version,
    )
    context["capturedAt"] = timezone.now().isoformat().replace("+00:00", "Z")
    return context


def say(client, session, text, context):
    return client.post(f"/api/v1/sessions/{session.pk}/messages", {"message": text, "context": context}, format="json")


def confirm(client, action):
    return client.post(
        f"/api/v1/actions/{action['id']}/confirm",
        {"confirmationToken": action["preview"]["confirmationToken"]},
        format="json",
    )


def report(client, action, value, context):
    return client.post(f"/api/v1/actions/{action['id']}/report", {"value": value, "context": context}, format="json")


@pytest.fixture
def admin_member(tenant):
    """A second user of the same tenant whose membership role is admin."""
    user = get_user_model().objects.create_user(username="chefe", password="x")
    api_token_create(user=user, tenant=tenant)
    Membership.objects.filter(user=user).update(role=Membership.Role.ADMIN)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.auth_token.key}")
    return user, client
