"""Index lifecycle: per-process index, rebuild on version change, query cache, other processes."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from knowledge.models import Package
from knowledge.routing_service import RouterIndexHolder, index_holder, route_context
from knowledge.services import catalog_sync_bundled, package_update

ROOT = Path(settings.BASE_DIR)


def _edit_body(package_id: str, body: str):
    package = Package.objects.get(package_id=package_id)
    return package_update(acting_user=None, package=package, data={**package.content(), "body": body})


def test_identical_queries_are_cached_per_catalog_version(catalog):
    first = route_context(message="Qual o prazo do Sanger?")
    again = route_context(message="Qual o prazo do Sanger?")
    assert (first.timings_ms["cached"], again.timings_ms["cached"]) == (0.0, 1.0)
    assert again.full_ids == first.full_ids
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: novo texto revisado.")
    after = route_context(message="Qual o prazo do Sanger?")
    assert after.timings_ms["cached"] == 0.0
    assert after.catalog_version == first.catalog_version + 1
    timelines = next(d for d in after.full if d.id == "DELIVERY_TIMELINES")
    assert timelines.body == "Prazo do Sanger: novo texto revisado." and timelines.revision == 2


def test_the_index_is_rebuilt_only_when_the_catalog_version_changes(catalog):
    holder = RouterIndexHolder()
    index, _ = holder.get()
    assert holder.get()[0] is index and holder.builds == 1
    _edit_body("PRICING_RULES", "Tabela nova.")
    rebuilt, _ = holder.get()
    assert rebuilt is not index and rebuilt.version == index.version + 1 and holder.builds == 2


def test_the_old_index_answers_while_the_new_one_is_built(catalog, monkeypatch, settings):
    settings.KNOWLEDGE_INDEX_DELTA_MAX = 0  # a full build (one edit would go through a delta)
    holder = RouterIndexHolder()
    old, _ = holder.get()
    _edit_body("PRICING_RULES", "Tabela nova.")
    started, release = threading.Event(), threading.Event()
    real_build = RouterIndexHolder._build

    def slow_build(self, catalog, config):
        started.set()
        release.wait(5)
        return real_build(self, catalog, config)

    monkeypatch.setattr(RouterIndexHolder, "_build", slow_build)
    from knowledge.catalog import get_active_catalog

    new_catalog = get_active_catalog()
    monkeypatch.setattr("knowledge.routing_service.get_active_catalog", lambda: new_catalog)
    builder = threading.Thread(target=holder.get)
    builder.start()
    assert started.wait(5)
    served, _ = holder.get()  # does not wait for the build
    assert served is old
    release.set()
    builder.join(5)
    assert holder.get()[0].version == old.version + 1


def test_reindex_command_rebuilds_on_demand(catalog, capsys):
    before = index_holder.builds
    call_command("reindex")
    assert index_holder.builds == before + 1
    assert "Router index rebuilt: catalog v" in capsys.readouterr().out


WORKER = """
import json, os, sys
import django
django.setup()
from knowledge.routing_service import route_context
for line in sys.stdin:
    result = route_context(message=line.strip())
    body = next((d.body for d in result.full if d.id == "DELIVERY_TIMELINES"), None)
    print(json.dumps({"version": result.catalog_version, "body": body}), flush=True)
"""


@pytest.mark.django_db(transaction=True)
def test_a_catalog_edit_reaches_the_next_query_in_another_process():
    catalog_sync_bundled()
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
    }
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:

        def ask():
            worker.stdin.write("Qual o prazo do Sanger?\n")
            worker.stdin.flush()
            return json.loads(worker.stdout.readline())

        before = ask()
        assert before["body"] and "editado em outro processo" not in before["body"]
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger editado em outro processo.")
        after = ask()  # no signal, no restart: the other process sees the version bump in the database
        assert after["version"] == before["version"] + 1
        assert after["body"] == "Prazo do Sanger editado em outro processo."
    finally:
        worker.stdin.close()
        worker.wait(10)


def test_a_warm_route_costs_one_query(catalog, django_assert_num_queries):
    route_context(message="Qual o prazo do Sanger?")  # builds the index, loads the feedback snapshot
    with django_assert_num_queries(1):  # the catalog version
        route_context(message="Qual o prazo do Sanger?")
    with django_assert_num_queries(1):
        route_context(message="Como envio a amostra de solo?", use_cache=False)


def test_reindex_makes_every_process_rebuild_on_its_next_question(catalog):
    from knowledge.routing_service import reindex

    other_process = RouterIndexHolder()  # another process's holder: it only sees the shared cache
    route_context(message="prazo")
    from django.core.cache import cache

    from knowledge.routing_service import ROUTER_GENERATION_KEY

    generation = int(cache.get(ROUTER_GENERATION_KEY) or 0)
    first, _ = other_process.get(generation=generation)
    assert other_process.get(generation=generation)[0] is first
    rebuilt_here = reindex()
    assert index_holder.current is rebuilt_here
    new_generation = int(cache.get(ROUTER_GENERATION_KEY))
    assert new_generation == generation + 1
    assert other_process.get(generation=new_generation)[0] is not first


def test_the_router_settings_are_read_once_and_again_after_a_change(catalog, settings, monkeypatch):
    from knowledge import routing_service

    reads = []
    real_read = routing_service._router_config_read
    monkeypatch.setattr(routing_service, "_router_config_read", lambda: reads.append(1) or real_read())
    routing_service.router_config_with_fingerprint.cache_clear()
    holder = RouterIndexHolder()
    index, fingerprint = holder.get()
    holder.get()
    route_context(message="Qual o prazo do Sanger?", use_cache=False)
    assert len(reads) == 1  # not once per question
    settings.KNOWLEDGE_LISTED_COVERAGE = 0.31  # pytest-django's fixture sends setting_changed
    rebuilt, changed = holder.get()
    assert len(reads) == 2 and changed != fingerprint
    assert rebuilt is not index and rebuilt.config.listed_coverage == 0.31 and holder.builds == 2
