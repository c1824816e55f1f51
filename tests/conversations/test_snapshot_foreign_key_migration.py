"""Message.context_snapshot became a real foreign key without losing the ids it held."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("conversations", "0004_agent_ontology_guardian")]
AFTER = [("conversations", "0005_message_context_snapshot_foreign_key")]


@pytest.fixture
def back_to_the_latest_schema():
    """Leave the database fully migrated: the transactional tests after this one need every column."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_existing_snapshot_ids_are_kept_and_dangling_ones_cleared(back_to_the_latest_schema):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    tenant = apps.get_model("accounts", "Tenant").objects.create(slug="mig", name="mig")
    agent = apps.get_model("conversations", "Agent").objects.create(slug="mig", name="mig", system_prompt="x")
    session = apps.get_model("conversations", "Session").objects.create(tenant=tenant, agent=agent)
    snapshot = apps.get_model("conversations", "ContextSnapshot").objects.create(
        tenant=tenant, session=session, version=1, sha256="0" * 64, size=2, captured_at="2026-01-01T00:00:00Z",
        context={},
    )  # fmt: skip
    Message = apps.get_model("conversations", "Message")
    kept = Message.objects.create(session=session, role="user", text="a", status="processed",
                                  context_snapshot_id=snapshot.pk)  # fmt: skip
    dangling = Message.objects.create(session=session, role="user", text="b", status="processed",
                                      context_snapshot_id=snapshot.pk + 1000)  # fmt: skip

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    Message = executor.loader.project_state(AFTER).apps.get_model("conversations", "Message")

    assert Message.objects.get(pk=kept.pk).context_snapshot_id == snapshot.pk
    assert Message.objects.get(pk=dangling.pk).context_snapshot_id is None
    assert Message._meta.get_field("context_snapshot").related_model._meta.model_name == "contextsnapshot"
