import pytest
from django.core.cache import cache

from knowledge.feedback import clear_feedback_snapshot
from knowledge.routing_service import index_holder


@pytest.fixture(autouse=True)
def _fresh_router():
    # The index, the feedback snapshot and the query cache outlive a test's DB rollback.
    index_holder.clear()
    clear_feedback_snapshot()
    cache.clear()
    yield
    index_holder.clear()
    clear_feedback_snapshot()
    cache.clear()


def package_data(**overrides):
    data = {
        "title": "Untitled",
        "summary": "One line.",
        "kind": "knowledge",
        "strict": False,
        "aliases": [],
        "keywords": [],
        "semantic_ids": [],
        "source": "test",
        "body": "Body.",
    }
    data.update(overrides)
    return data


@pytest.fixture
def make_package(db):
    from knowledge.services import package_create

    def make(package_id, **fields):
        return package_create(acting_user=None, package_id=package_id, data=package_data(**fields))

    return make


def why_signals(delivered) -> set[str]:
    return {n["signal"] for n in delivered.why}


def find(result, package_id):
    for d in result.ranked():
        if d.id == package_id:
            return d
    raise AssertionError(f"{package_id} not delivered: {result.delivered_ids}")
