"""Compaction by a real Celery worker (issue 17): a committed edit queues ``knowledge.router_index_build``
through the Redis broker (TEST_REDIS_URL), the worker process writes the new content's segment into the
shared index directory, and this (web) process, serving the edit through a delta, maps that segment
instead of writing it.

transactional_db: the worker is another process and must see committed rows.
"""

import threading

import pytest
import redis
from django.conf import settings as django_settings

from config.celery import app as celery_app
from knowledge import index_store
from knowledge.models import Package
from knowledge.retrieval.segment_build import segment_build
from knowledge.retrieval.segments import is_mapped
from knowledge.routing_service import RouterIndexHolder
from knowledge.services import catalog_sync_bundled, package_update
from tests.explanations.test_real_worker import WAIT_SECONDS, WorkerProcess

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(tmp_path, settings, monkeypatch):
    index = tmp_path / "index"
    settings.KNOWLEDGE_INDEX_DIR = index
    monkeypatch.setenv("KNOWLEDGE_INDEX_DIR", str(index))  # the worker's test settings read it from there
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False  # publish to the real broker
    redis.Redis.from_url(django_settings.TEST_REDIS_URL).flushdb()  # this checkout's own Redis db
    process = WorkerProcess(tmp_path, "http://127.0.0.1:9")  # no model: this task never calls one
    try:
        process.wait_ready()
        yield process
    finally:
        celery_app.conf.task_always_eager = eager
        leaked = process.stop()
    assert not leaked, f"worker processes left running: {leaked}"


def test_an_edit_is_compacted_by_the_worker_and_mapped_by_the_web_process(worker, settings, monkeypatch):
    catalog_sync_bundled()
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    settings.KNOWLEDGE_INDEX_COMPACT_WAIT = WAIT_SECONDS
    holder = RouterIndexHolder()
    base, _ = holder.get()  # this process writes the first segment

    def not_in_the_background(*args, **kwargs):
        if threading.current_thread().name == "router-index-build":
            raise AssertionError("the web process compacted itself instead of mapping the worker's segment")
        return segment_build(*args, **kwargs)

    monkeypatch.setattr(index_store, "segment_build", not_in_the_background)
    package = Package.objects.get(package_id="DELIVERY_TIMELINES")
    body = "Prazo do Sanger: quinze dias, compactado pelo worker."
    package_update(acting_user=None, package=package, data={**package.content(), "body": body})  # commits: queued
    merged, _ = holder.get()
    assert merged.delta_base is base  # the edit is served at once, through the delta
    holder.wait_background(WAIT_SECONDS + 30)
    compacted, _ = holder.get()
    assert compacted.delta_base is None and compacted.version == merged.version
    assert is_mapped(compacted.bm25._postings.data)
    timelines = next(d for d in compacted.route("Qual o prazo do Sanger?").full if d.id == "DELIVERY_TIMELINES")
    assert timelines.body == body
    log = worker.output()
    assert "knowledge.router_index_build" in log and "router_segment_prepared" in log
    assert body not in log  # ids, statuses and durations only
