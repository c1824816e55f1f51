"""The shared index: one memory-mapped segment per catalog content, edits through a delta, compaction, GC."""

import json
import os
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import REGISTRY
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connection

from knowledge import index_store
from knowledge.catalog import get_active_catalog
from knowledge.models import Package
from knowledge.retrieval import dense_segment, segments
from knowledge.retrieval.index import RouterIndex, entries_digest
from knowledge.retrieval.segment_build import segment_build
from knowledge.retrieval.segments import is_mapped, segment_lock, segment_write
from knowledge.routing_service import RouterIndexHolder, _config_fingerprint, router_config
from knowledge.services import catalog_sync_bundled, package_update

ROOT = Path(django_settings.BASE_DIR)


def _edit_body(package_id: str, body: str):
    package = Package.objects.get(package_id=package_id)
    return package_update(acting_user=None, package=package, data={**package.content(), "body": body})


def _segments(directory: Path) -> list[str]:
    """The BM25 segments (the entry vectors' segments live apart, under ``vectors/``)."""
    return sorted(p.name for p in directory.iterdir() if (p / "meta.json").is_file())


def _ranked(index, question="Qual o prazo do Sanger?"):
    return [(d.id, d.shape, round(d.score, 9)) for d in index.route(question).ranked()]


@pytest.fixture
def shared(settings, tmp_path):
    settings.KNOWLEDGE_INDEX_DIR = tmp_path / "index"
    return settings.KNOWLEDGE_INDEX_DIR


def test_the_first_process_writes_the_segment_and_the_next_one_maps_it(catalog, shared, monkeypatch):
    first, _ = RouterIndexHolder().get()
    assert len(_segments(shared)) == 1
    assert is_mapped(first.bm25._postings.data)  # the builder serves from the shared pages too

    def no_write(*args, **kwargs):
        raise AssertionError("the segment exists: nobody writes it again")

    monkeypatch.setattr(index_store, "segment_build", no_write)
    second, _ = RouterIndexHolder().get()
    assert second is not first and second.bm25.segment_file == first.bm25.segment_file
    assert _ranked(second) == _ranked(first)


def test_a_process_waits_for_the_builder_then_maps_its_segment(catalog, shared, monkeypatch):
    catalog_now = get_active_catalog()
    config = router_config()
    fingerprint = _config_fingerprint(config)
    config = index_store.catalog_config(catalog_now, config)
    key = index_store.catalog_segment_key(entries_digest(catalog_now.entries), config, fingerprint)
    built = []
    monkeypatch.setattr(index_store, "segment_build", lambda *a, **k: built.append(a) or segment_build(*a, **k))
    monkeypatch.setattr("knowledge.routing_service.get_active_catalog", lambda: catalog_now)  # no DB in the thread
    holder = RouterIndexHolder()
    result = {}
    with segment_lock(shared, key):  # another process is building this segment
        waiter = threading.Thread(target=lambda: result.update(index=holder.get()[0]))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive()  # no index yet in this process: its first question waits
        segment_write(shared, key, RouterIndex(catalog_now.entries, config=config).bm25)
    waiter.join(20)
    assert built == [] and is_mapped(result["index"].bm25._postings.data)


def test_an_edit_goes_through_a_delta_then_is_compacted_in_the_background(catalog, shared, settings):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    holder = RouterIndexHolder()
    base, _ = holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: cinco dias úteis, revisado.")
    merged, _ = holder.get()
    assert merged.delta_base is base and holder.deltas == 1
    timelines = next(d for d in merged.route("Qual o prazo do Sanger?").full if d.id == "DELIVERY_TIMELINES")
    assert timelines.body == "Prazo do Sanger: cinco dias úteis, revisado."
    holder.wait_background(60)
    compacted, _ = holder.get()
    assert compacted.delta_base is None and compacted.version == merged.version
    assert is_mapped(compacted.bm25._postings.data)
    assert _ranked(compacted) == _ranked(merged)
    assert len(_segments(shared)) == 2  # the new content's segment and the previous one


def test_a_big_change_is_built_in_the_background_while_the_old_index_answers(catalog, shared, settings):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    settings.KNOWLEDGE_INDEX_DELTA_MAX = 0  # every change needs a full build
    holder = RouterIndexHolder()
    old, _ = holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: dez dias.")
    served, _ = holder.get()
    assert served is old  # the question does not wait for the build
    holder.wait_background(60)
    new, _ = holder.get()
    assert new.version == old.version + 1 and new.delta_base is None
    assert "dez dias" in next(d.body for d in new.route("Qual o prazo do Sanger?").full if d.id == "DELIVERY_TIMELINES")


def test_old_segments_are_collected_and_the_newest_kept(catalog, shared, settings):
    settings.KNOWLEDGE_INDEX_DELTA_MAX = 0  # every edit: a full build, a new segment
    settings.KNOWLEDGE_INDEX_KEEP = 2
    holder = RouterIndexHolder()
    keys = []
    for i in range(4):
        _edit_body("PRICING_RULES", f"Tabela de preços número {i}.")
        index, _ = holder.get()
        keys.append(
            index_store.catalog_segment_key(index.content_digest, index.config, _config_fingerprint(router_config()))
        )
    assert _segments(shared) == sorted(keys[-2:])


def test_a_delta_routes_like_a_fresh_build_of_the_edited_catalog(catalog):
    holder = RouterIndexHolder()
    holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: três dias. Ver [[PRICING_RULES]].")
    merged, _ = holder.get()
    assert merged.delta_base is not None
    fresh = RouterIndex(get_active_catalog().entries, config=merged.config)
    for question in ("Qual o prazo do Sanger?", "quanto custa", "preço e prazo do sequenciamento"):
        assert _ranked(merged, question) == _ranked(fresh, question)


WORKER = """
import json, sys
import django
django.setup()
from knowledge.routing_service import index_holder, route_context
for line in sys.stdin:
    result = route_context(message=line.strip(), use_cache=False)
    index = index_holder.current
    base = index.delta_base or index
    body = next((d.body for d in result.full if d.id == "DELIVERY_TIMELINES"), None)
    dense = {}
    if index.dense is not None:
        from knowledge.catalog import get_active_catalog
        from knowledge.retrieval.dense_segment import mapped_file
        from knowledge.retrieval.segments import is_mapped
        held = get_active_catalog().vectors
        dense = {"file": mapped_file(index.dense), "overlay": index.dense.overlay_slots.tolist(),
                 "base_file": mapped_file(base.dense), "slot": index.position["DELIVERY_TIMELINES"],
                 "views": sum(isinstance(v, memoryview) and is_mapped(v.obj) for v in held.values()),
                 "held": len(held)}
    print(json.dumps({"version": result.catalog_version, "body": body, "delta": index.delta_base is not None,
                      "segment": str(base.bm25.segment_file), "dense": dense}), flush=True)
"""


def _workers(tmp_path, n=2):
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "KNOWLEDGE_INDEX_DIR": str(tmp_path / "index"),
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": "WARNING",
    }
    return [
        subprocess.Popen(
            [sys.executable, "-c", WORKER], cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(n)
    ]


def _ask(worker, question="Qual o prazo do Sanger?"):
    worker.stdin.write(question + "\n")
    worker.stdin.flush()
    return json.loads(worker.stdout.readline())


@pytest.mark.django_db(transaction=True)
def test_two_processes_map_one_segment_and_both_see_an_edit_through_the_delta(tmp_path):
    catalog_sync_bundled()
    workers = _workers(tmp_path)
    try:
        before = [_ask(w) for w in workers]
        assert before[0]["segment"] == before[1]["segment"]  # one file, mapped by both
        assert len(_segments(tmp_path / "index")) == 1
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger editado e visto pelos dois processos.")
        after = [_ask(w) for w in workers]
        for seen in after:
            assert seen["version"] == before[0]["version"] + 1 and seen["delta"] is True
            assert seen["body"] == "Prazo do Sanger editado e visto pelos dois processos."
            assert seen["segment"] == before[0]["segment"]
    finally:
        for worker in workers:
            worker.stdin.close()
            worker.wait(10)


@pytest.mark.django_db(transaction=True)
def test_two_processes_map_one_vectors_file_and_both_overlay_an_edited_vector(tmp_path, settings):
    catalog_sync_bundled()
    call_command("embed_packages", stdout=StringIO())
    workers = _workers(tmp_path)
    try:
        before = [_ask(w)["dense"] for w in workers]
        assert before[0]["file"] and before[0]["file"] == before[1]["file"]  # one file, mapped by both
        for seen in before:  # the catalog holds views into that mapping, no bytes of its own
            assert seen["overlay"] == [] and seen["held"] == 15 and seen["views"] == 15
        settings.KNOWLEDGE_EMBED_ON_SAVE = True  # the edit's vector is computed on commit (eager here)
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger editado: o resultado sai em dois dias úteis.")
        after = [_ask(w) for w in workers]
        for seen in after:
            assert seen["delta"] is True and seen["body"].startswith("Prazo do Sanger editado")
            dense = seen["dense"]
            assert dense["file"] == dense["base_file"] == before[0]["file"]  # the base's mapping, kept
            assert dense["overlay"] == [dense["slot"]]  # the one edited vector
            assert dense["views"] == 14  # every vector but the edited one still a view of the file
    finally:
        for worker in workers:
            worker.stdin.close()
            worker.wait(10)


def test_the_celery_task_prepares_the_segment_once(catalog, shared):
    from knowledge.tasks import router_index_build

    first = router_index_build.delay().get()
    assert first["status"] == "built" and _segments(shared) == [first["key"]]
    assert router_index_build.delay().get()["status"] == "exists"
    index, _ = RouterIndexHolder().get()
    assert str(index.bm25.segment_file).startswith(str(shared / first["key"]))


def test_the_celery_task_prepares_the_entry_vectors_file_the_processes_map(catalog, shared, monkeypatch):
    # The vectors are streamed from the database into their file (no catalog, no dict of every vector
    # in the task's process), under the key a process holding them computes: no process writes them.
    from knowledge import embeddings
    from knowledge.tasks import router_index_build

    call_command("embed_packages", stdout=StringIO())

    def not_held(*args, **kwargs):
        raise AssertionError("the task streams the vectors: it holds no catalog's vectors")

    monkeypatch.setattr(embeddings, "catalog_vectors", not_held)
    built = router_index_build.delay().get()
    assert built["status"] == "built" and built["vectors"] == "built"
    (key,) = _segments(shared / "vectors")
    assert router_index_build.delay().get()["vectors"] == "exists"
    monkeypatch.undo()

    def no_write(*args, **kwargs):
        raise AssertionError("a process wrote the vectors file the task prepared")

    monkeypatch.setattr(dense_segment, "dense_segment_write", no_write)
    index, _ = RouterIndexHolder().get()
    assert is_mapped(index.dense.matrix) and index.dense.has_any
    assert dense_segment.mapped_file(index.dense).startswith(str(shared / "vectors" / key))
    assert _segments(shared / "vectors") == [key]


def test_without_stored_vectors_or_with_the_model_off_the_task_writes_no_vectors_file(catalog, shared, monkeypatch):
    from common.text import retrieval_embeddings
    from knowledge.tasks import router_index_build

    assert router_index_build.delay().get()["vectors"] == "none"
    call_command("embed_packages", stdout=StringIO())
    monkeypatch.setattr(retrieval_embeddings, "enabled", lambda: False)
    assert router_index_build.delay().get()["vectors"] == "disabled"
    assert not (shared / "vectors").exists() or _segments(shared / "vectors") == []


def test_the_streamed_entries_are_the_catalogs(catalog):
    from knowledge.catalog import catalog_entries_stream, clear_catalog_cache
    from knowledge.models import RevisionSearchTerms

    package = Package.objects.get(package_id="DELIVERY_TIMELINES")
    RevisionSearchTerms.objects.create(
        revision=package.revisions.get(number=package.revision_number),
        status=RevisionSearchTerms.Status.ACCEPTED,
        accepted=["turnaround time", "plazo de entrega"],
    )
    emptied = Package.objects.exclude(pk=package.pk).first()
    Package.objects.filter(pk=emptied.pk).update(body="  ")  # an empty body is not in the catalog
    clear_catalog_cache()
    held = get_active_catalog().entries
    assert any(e.search_terms for e in held) and emptied.package_id not in {e.package_id for e in held}
    for batch in (1, 3, 2000):
        assert list(catalog_entries_stream(batch)) == list(held)


def test_the_celery_task_writes_the_segment_without_holding_the_catalog(catalog, shared, monkeypatch):
    from knowledge import catalog as catalog_module
    from knowledge.tasks import router_index_build

    def not_held(*args, **kwargs):
        raise AssertionError("the task streams the entries: no catalog is built in its process")

    monkeypatch.setattr(catalog_module.Catalog, "build", not_held)
    monkeypatch.setattr(index_store.RouterIndex, "__init__", not_held)
    built = router_index_build.delay().get()
    assert built["status"] == "built"
    monkeypatch.undo()

    def no_write(*args, **kwargs):
        raise AssertionError("the task wrote this catalog's segment: processes map it")

    monkeypatch.setattr(index_store, "segment_build", no_write)
    index, _ = RouterIndexHolder().get()
    assert index.bm25.segment_file.parent.name == built["key"]
    assert _ranked(index) == _ranked(RouterIndex(get_active_catalog().entries, config=router_config()))


def test_with_curated_synonyms_the_task_names_the_segment_as_the_processes_do(catalog, shared, monkeypatch):
    """Synonym sets change the segment's key: the task (synonyms read on their own) and a web process
    (synonyms held by its catalog) must name it alike, or the task's segment is never mapped."""
    from knowledge.catalog import clear_catalog_cache
    from knowledge.models import SynonymSet
    from knowledge.tasks import router_index_build

    SynonymSet.objects.create(name="b-ancestry", terms=["antepassados", "ancestralidade"])
    SynonymSet.objects.create(name="a-refund", terms=["estorno", "reembolso"])
    clear_catalog_cache()
    assert len(get_active_catalog().synonyms) == 2
    built = router_index_build.delay().get()
    assert built["status"] == "built"

    def no_write(*args, **kwargs):
        raise AssertionError("the task wrote this catalog's segment: processes map it")

    monkeypatch.setattr(index_store, "segment_build", no_write)
    index, _ = RouterIndexHolder().get()
    assert index.bm25.segment_file.parent.name == built["key"]
    assert index.config.synonyms == get_active_catalog().synonyms


def test_a_catalog_changed_while_the_task_writes_publishes_nothing(catalog, shared, monkeypatch):
    import dataclasses

    from knowledge import catalog as catalog_module
    from knowledge.tasks import router_index_build

    stream = catalog_module.catalog_entries_stream
    reads = []

    def edited_on_second_read(*args, **kwargs):
        reads.append(1)
        for e in stream(*args, **kwargs):
            yield dataclasses.replace(e, body=e.body + " editado") if len(reads) == 2 else e

    monkeypatch.setattr(catalog_module, "catalog_entries_stream", edited_on_second_read)
    assert router_index_build.delay().get()["status"] == "changed"
    assert len(reads) == 2 and _segments(shared) == []
    assert not [p for p in shared.iterdir() if p.name.startswith(".tmp-")]


def test_without_an_index_directory_the_task_does_nothing(catalog, settings):
    from knowledge.tasks import router_index_build

    settings.KNOWLEDGE_INDEX_DIR = None
    assert router_index_build.delay().get()["status"] == "disabled"


@pytest.mark.parametrize("mapped", [False, True], ids=["in-memory", "shared"])
def test_a_delta_carries_the_edited_catalogs_entry_vectors(
    catalog, settings, tmp_path, django_capture_on_commit_callbacks, mapped
):
    # The dense signal's vectors are aligned with the index's entries: a delta (whose slots are the
    # base's, new entries appended) gets the edited revision's vector, and routes like a fresh build.
    # It overlays that one vector on the base's matrix (shared or not), never copies the matrix.
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    settings.KNOWLEDGE_INDEX_DIR = tmp_path / "index" if mapped else None
    call_command("embed_packages", stdout=StringIO())
    holder = RouterIndexHolder()
    base, _ = holder.get()
    assert base.dense is not None and is_mapped(base.dense.matrix) is mapped
    new_body = "Se pagar a taxa de urgência, o resultado sai em dois dias. Ver [[PRICING_RULES]]."
    with django_capture_on_commit_callbacks(execute=True):
        _edit_body("DELIVERY_TIMELINES", new_body)
    merged, _ = holder.get()
    catalog_now = get_active_catalog()
    assert merged.delta_base is base and merged.dense is not None
    slot = merged.position["DELIVERY_TIMELINES"]
    assert merged.dense.matrix is base.dense.matrix and merged.dense.overlay_slots.tolist() == [slot]
    stored = np.frombuffer(catalog_now.vectors["DELIVERY_TIMELINES"], dtype="<f4")
    assert np.array_equal(merged.dense.vector(slot), stored)
    assert not np.array_equal(base.dense.vector(slot), stored)  # the edit's text, not the base's
    settings.KNOWLEDGE_INDEX_DIR = None  # the fresh build's own matrix, in memory
    fresh = RouterIndex(catalog_now.entries, config=merged.config, dense=index_store.catalog_dense(catalog_now))
    # The overlaid row's cosine is one small product, not a row of the whole matrix's: it may differ
    # from the fresh build's in the last bit of float32 (docs/retrieval.md, "Shared entry vectors").
    assert np.allclose(fresh.dense.similarities(stored), merged.dense.similarities(stored), rtol=0, atol=1e-6)
    for question in ("Se eu pagar a mais, em quantos dias sai o resultado?", "How fast can I get my results?"):
        assert _ranked(merged, question) == _ranked(fresh, question)


def test_entry_vectors_are_mapped_from_one_file_and_the_catalog_keeps_no_copy(catalog, shared):
    # Each process used to hold every vector twice (the catalog's bytes and the dense matrix). Now
    # the first process writes them into one file named by their content; every process maps it,
    # and the catalog keeps views into that mapping instead of its own bytes.
    call_command("embed_packages", stdout=StringIO())
    first, _ = RouterIndexHolder().get()
    assert is_mapped(first.dense.matrix)
    vector_segments = _segments(shared / "vectors")
    assert len(vector_segments) == 1
    held = get_active_catalog().vectors
    assert held and all(isinstance(v, memoryview) and is_mapped(v.obj) for v in held.values())
    second, _ = RouterIndexHolder().get()  # another process: the same file, not a second write
    assert second.dense is not first.dense and is_mapped(second.dense.matrix)
    assert _segments(shared / "vectors") == vector_segments
    assert dense_segment.mapped_file(second.dense) == dense_segment.mapped_file(first.dense)
    for question in ("Se eu pagar a mais, em quantos dias sai o resultado?", "How fast can I get my results?"):
        assert _ranked(first, question) == _ranked(second, question)


def test_new_vectors_name_a_new_file_and_old_ones_are_collected(catalog, shared, settings):
    settings.KNOWLEDGE_INDEX_KEEP = 1
    call_command("embed_packages", stdout=StringIO())
    holder = RouterIndexHolder()
    holder.get()
    before = _segments(shared / "vectors")
    _edit_body("PRICING_RULES", "Tabela de preços revista.")
    call_command("embed_packages", stdout=StringIO())  # the new revision's vector
    holder.rebuild()
    after = _segments(shared / "vectors")
    assert len(after) == 1 and after != before


def test_an_unusable_vectors_file_is_written_anew(catalog, shared):
    call_command("embed_packages", stdout=StringIO())
    RouterIndexHolder().get()
    (name,) = _segments(shared / "vectors")
    matrix = shared / "vectors" / name / "matrix.npy"
    data = matrix.read_bytes()
    matrix.unlink()  # a new file: the running "process" still maps the old one (never changed in place)
    matrix.write_bytes(data[:100])  # truncated
    index, _ = RouterIndexHolder().get()
    assert is_mapped(index.dense.matrix) and index.dense.has_any
    assert _segments(shared / "vectors") == [name] and matrix.stat().st_size > 100


def test_an_unreadable_segment_is_written_anew(catalog, shared):
    first, _ = RouterIndexHolder().get()
    (segment,) = _segments(shared)
    meta = shared / segment / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "format": 0}))  # an older format under the key
    second, _ = RouterIndexHolder().get()
    assert is_mapped(second.bm25._postings.data)
    assert json.loads(meta.read_text())["format"] != 0
    assert _ranked(second) == _ranked(first)


def test_a_segment_missing_a_table_this_code_reads_is_written_anew(catalog, shared):
    first, _ = RouterIndexHolder().get()
    (segment,) = _segments(shared)
    meta = shared / segment / "meta.json"
    stored = json.loads(meta.read_text())
    del stored["tables"]["typos.keys"]  # written by a version of the same format that stored fewer tables
    meta.write_text(json.dumps(stored))
    second, _ = RouterIndexHolder().get()  # was: KeyError on every question until var/index was cleared
    assert is_mapped(second.bm25._postings.data)
    assert "typos.keys" in json.loads(meta.read_text())["tables"]
    assert _ranked(second) == _ranked(first)


def test_each_segment_format_has_its_own_directory_so_two_code_versions_do_not_rebuild_each_other(
    catalog, shared, monkeypatch
):
    RouterIndexHolder().get()
    (old,) = _segments(shared)
    monkeypatch.setattr(segments, "FORMAT", segments.FORMAT + 1)  # the new code, mid rolling deploy
    RouterIndexHolder().get()
    assert len(_segments(shared)) == 2 and old in _segments(shared)
    monkeypatch.setattr(segments, "FORMAT", segments.FORMAT - 1)  # a process still on the old code

    def no_write(*args, **kwargs):
        raise AssertionError("each version maps its own segment: nobody rebuilds")

    monkeypatch.setattr(index_store, "segment_build", no_write)
    again, _ = RouterIndexHolder().get()
    assert is_mapped(again.bm25._postings.data) and again.bm25.segment_file.parent.name == old


def test_an_unusable_index_directory_falls_back_to_an_index_in_memory(catalog, settings, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    settings.KNOWLEDGE_INDEX_DIR = blocker / "index"
    call_command("embed_packages", stdout=StringIO())
    before = _metric("contexto_router_shared_unavailable_total", part="segment")
    vectors_before = _metric("contexto_router_shared_unavailable_total", part="vectors")
    memory_before = _metric("contexto_router_index_ready_total", how="memory")
    index, _ = RouterIndexHolder().get()
    assert not is_mapped(index.bm25._postings.data)
    assert index.dense is not None and not is_mapped(index.dense.matrix)
    assert [d.id for d in index.route("Qual o prazo do Sanger?").full]
    # What an operator sees: this process could not share, and keeps its own copy of both parts.
    assert _metric("contexto_router_shared_unavailable_total", part="segment") == before + 1
    assert _metric("contexto_router_shared_unavailable_total", part="vectors") == vectors_before + 1
    assert _metric("contexto_router_index_ready_total", how="memory") == memory_before + 1


def _metric(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_how_each_process_got_its_index_is_counted_and_timed(catalog, shared):
    hows = ("written", "mapped", "delta", "memory")
    before = {how: _metric("contexto_router_index_ready_total", how=how) for how in hows}
    timed = _metric("contexto_router_index_ready_seconds_count", how="mapped")
    holder = RouterIndexHolder()
    holder.get()  # the first process: writes the segment
    RouterIndexHolder().get()  # another process: maps it
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: quatro dias úteis.")
    holder.get()  # the edit, through a delta (no compaction: background builds are off here)
    counted = {how: _metric("contexto_router_index_ready_total", how=how) - before[how] for how in hows}
    assert counted == {"written": 1, "mapped": 1, "delta": 1, "memory": 0}
    assert _metric("contexto_router_index_ready_seconds_count", how="mapped") == timed + 1


def test_routes_are_timed_by_whether_the_route_cache_answered(catalog):
    from knowledge.routing_service import route_context

    miss = _metric("contexto_router_route_seconds_count", cached="false")
    hit = _metric("contexto_router_route_seconds_count", cached="true")
    for _ in range(2):
        route_context(message="Qual o prazo do Sanger para um pedido de teste de métricas?")
    assert _metric("contexto_router_route_seconds_count", cached="false") == miss + 1
    assert _metric("contexto_router_route_seconds_count", cached="true") == hit + 1


def test_concurrent_questions_start_one_background_build(settings, monkeypatch):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    holder = RouterIndexHolder()
    builds = []
    release = threading.Event()
    monkeypatch.setattr(holder, "_build", lambda catalog, config: builds.append(1) or release.wait(10))
    check = holder._background_running

    def slow_check():  # widen the window between "is one running?" and starting one
        running = check()
        time.sleep(0.05)
        return running

    monkeypatch.setattr(holder, "_background_running", slow_check)
    barrier = threading.Barrier(8)

    def ask():
        barrier.wait()
        holder._start_background(object(), None, "f", 0)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    release.set()
    holder.wait_background(10)
    assert builds == [1]


def test_the_deploy_command_prepares_the_segment_and_the_vectors_and_says_so(catalog, shared, settings):
    out = StringIO()
    call_command("prepare_router_index", stdout=out)
    assert "segment (catalog v" in out.getvalue() and ": written." in out.getvalue()
    assert "Entry vectors' file: none stored (run embed_packages first)." in out.getvalue()
    call_command("embed_packages", stdout=StringIO())
    out = StringIO()
    call_command("prepare_router_index", stdout=out)
    assert "segment (catalog v" in out.getvalue() and "already on disk" in out.getvalue()
    assert "Entry vectors' file: written." in out.getvalue()
    assert len(_segments(shared)) == 1 and len(_segments(shared / "vectors")) == 1
    settings.KNOWLEDGE_INDEX_DIR = None
    out = StringIO()
    call_command("prepare_router_index", stdout=out)
    assert "KNOWLEDGE_INDEX_DIR is not set" in out.getvalue()


# --- compaction by the worker: a change queues the task, a process with a delta maps its segment ---


@pytest.fixture
def queue(settings, shared, monkeypatch):
    """A broker as in production (tasks not eager, a compaction wait), the task's queueing recorded."""
    from django.core.cache import cache

    from knowledge import tasks

    conf = tasks.router_index_build.app.conf
    eager = conf.task_always_eager
    conf.task_always_eager = False  # Celery's settings object: set and put back, not monkeypatched
    settings.KNOWLEDGE_INDEX_COMPACT_WAIT = 30
    cache.delete(index_store.BUILD_PENDING_KEY)
    queued = []
    monkeypatch.setattr(tasks.router_index_build, "delay", lambda: queued.append(1))
    yield queued
    conf.task_always_eager = eager
    cache.delete(index_store.BUILD_PENDING_KEY)


def test_a_committed_change_queues_the_worker_build_once_per_burst(
    catalog, queue, settings, django_capture_on_commit_callbacks
):
    outcomes = ("queued", "already_queued", "failed")
    before = {o: _metric("contexto_router_index_build_queue_total", outcome=o) for o in outcomes}
    with django_capture_on_commit_callbacks(execute=True):
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: seis dias.")
    assert queue == [1]
    with django_capture_on_commit_callbacks(execute=True):  # the queued task has not started: it reads this too
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: sete dias.")
    assert queue == [1]
    from knowledge import tasks

    assert tasks.router_index_build.apply().get()["status"] == "built"  # the worker took it and wrote the segment
    with django_capture_on_commit_callbacks(execute=True):  # so the next change queues another
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: oito dias.")
    assert queue == [1, 1]
    counted = {o: _metric("contexto_router_index_build_queue_total", outcome=o) - before[o] for o in outcomes}
    assert counted == {"queued": 2, "already_queued": 1, "failed": 0}


@pytest.mark.parametrize("setting", ["eager", "no wait", "no directory"])
def test_no_task_is_queued_with_eager_tasks_no_wait_or_no_index_directory(
    catalog, queue, settings, setting, django_capture_on_commit_callbacks
):
    from knowledge import tasks

    if setting == "eager":  # the build would run inside the curator's request (the fixture puts it back)
        tasks.router_index_build.app.conf.task_always_eager = True
    elif setting == "no wait":
        settings.KNOWLEDGE_INDEX_COMPACT_WAIT = 0
    else:
        settings.KNOWLEDGE_INDEX_DIR = None
    with django_capture_on_commit_callbacks(execute=True):
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: seis dias.")
    assert queue == []


def test_a_broker_that_cannot_be_reached_never_fails_the_edit(
    catalog, queue, monkeypatch, django_capture_on_commit_callbacks
):
    from knowledge import tasks

    def unreachable():
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.router_index_build, "delay", unreachable)
    failed = _metric("contexto_router_index_build_queue_total", outcome="failed")
    with django_capture_on_commit_callbacks(execute=True):
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: nove dias.")
    assert Package.objects.get(package_id="DELIVERY_TIMELINES").content()["body"] == "Prazo do Sanger: nove dias."
    assert _metric("contexto_router_index_build_queue_total", outcome="failed") == failed + 1
    monkeypatch.setattr(tasks.router_index_build, "delay", lambda: queue.append(1))
    with django_capture_on_commit_callbacks(execute=True):  # the mark was not left behind: the next one queues
        _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: dez dias.")
    assert queue == [1]


def _no_write_in_the_background(monkeypatch):
    """segment_build refused on the holder's background thread (the worker, in the test's thread, may write)."""

    def guarded(*args, **kwargs):
        if threading.current_thread().name == "router-index-build":
            raise AssertionError("the process compacted itself instead of mapping the worker's segment")
        return segment_build(*args, **kwargs)

    monkeypatch.setattr(index_store, "segment_build", guarded)


def test_a_delta_is_compacted_by_mapping_the_segment_the_worker_writes(catalog, queue, settings, monkeypatch):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    holder = RouterIndexHolder()
    holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: onze dias.")
    _no_write_in_the_background(monkeypatch)
    mapped = _metric("contexto_router_index_ready_total", how="mapped")
    merged, _ = holder.get()
    assert merged.delta_base is not None
    time.sleep(0.6)
    assert holder._background_running()  # waiting for the worker, serving the delta meanwhile
    assert index_store.router_index_prepare()["status"] == "built"  # the worker
    holder.wait_background(30)
    compacted, _ = holder.get()
    assert compacted.delta_base is None and compacted.version == merged.version
    assert is_mapped(compacted.bm25._postings.data)
    assert _ranked(compacted) == _ranked(merged)
    assert _metric("contexto_router_index_ready_total", how="mapped") == mapped + 1


def test_without_the_worker_the_process_compacts_itself_after_its_wait(catalog, queue, settings):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    settings.KNOWLEDGE_INDEX_COMPACT_WAIT = 0.5
    holder = RouterIndexHolder()
    holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: doze dias.")
    written = _metric("contexto_router_index_ready_total", how="written")
    merged, _ = holder.get()
    holder.wait_background(30)
    compacted, _ = holder.get()
    assert compacted.delta_base is None and _ranked(compacted) == _ranked(merged)
    assert _metric("contexto_router_index_ready_total", how="written") == written + 1


def test_a_newer_change_ends_the_wait_and_its_own_compaction_follows(catalog, queue, settings, monkeypatch):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    holder = RouterIndexHolder()
    holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: treze dias.")
    first, _ = holder.get()
    time.sleep(0.3)
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: catorze dias.")
    second, _ = holder.get()  # a delta of the newer catalog: the first wait is no longer wanted
    assert second is not first and second.delta_base is not None
    holder.wait_background(5)
    assert not holder._background_running()  # ended within a poll, built nothing
    _no_write_in_the_background(monkeypatch)
    again, _ = holder.get()  # the newer delta's compaction starts: it waits for the worker in turn
    assert again is second and holder._background_running()
    assert index_store.router_index_prepare()["status"] == "built"
    holder.wait_background(30)
    compacted, _ = holder.get()
    assert compacted.delta_base is None and compacted.version == second.version


def test_a_change_too_big_for_a_delta_maps_the_segment_the_worker_writes(catalog, queue, settings, monkeypatch):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    settings.KNOWLEDGE_INDEX_DELTA_MAX = 0  # every change needs a full build
    holder = RouterIndexHolder()
    old, _ = holder.get()
    _edit_body("DELIVERY_TIMELINES", "Prazo do Sanger: quinze dias.")
    _no_write_in_the_background(monkeypatch)
    mapped = _metric("contexto_router_index_ready_total", how="mapped")
    served, _ = holder.get()
    assert served is old  # the old catalog answers while the new one's segment is made
    time.sleep(0.6)
    assert holder._background_running()  # waiting for the worker, not building
    assert index_store.router_index_prepare()["status"] == "built"  # the worker
    holder.wait_background(30)
    new, _ = holder.get()
    assert new.version > old.version and new.delta_base is None
    assert is_mapped(new.bm25._postings.data)
    assert [e.body for e in new.entries if e.package_id == "DELIVERY_TIMELINES"] == ["Prazo do Sanger: quinze dias."]
    assert _metric("contexto_router_index_ready_total", how="mapped") == mapped + 1


def test_a_settings_change_is_built_at_once_without_waiting_for_the_worker(catalog, queue, settings):
    settings.KNOWLEDGE_INDEX_BACKGROUND = True
    holder = RouterIndexHolder()
    old, _ = holder.get()
    settings.KNOWLEDGE_ROUTER_RRF_K = 30  # a new fingerprint: nothing was committed, no task is coming
    written = _metric("contexto_router_index_ready_total", how="written")
    served, fingerprint = holder.get()
    assert served is old
    holder.wait_background(5)
    assert not holder._background_running()  # built within the 5 s, not after the 30 s wait
    new, new_fingerprint = holder.get()
    assert new is not old and new_fingerprint != fingerprint
    assert _metric("contexto_router_index_ready_total", how="written") == written + 1


def test_the_catalog_digest_is_taken_once_for_the_wait_and_the_build(catalog, shared, monkeypatch):
    from knowledge import catalog as catalog_module
    from knowledge.catalog import Catalog

    active = get_active_catalog()
    snapshot = Catalog.build(active.version, list(active.entries), active.synonyms, active.vectors)
    calls = []

    def counted(entries):
        calls.append(1)
        return entries_digest(entries)

    monkeypatch.setattr(catalog_module, "entries_digest", counted)
    monkeypatch.setattr(index_store, "entries_digest", counted)
    config = router_config()
    fingerprint = _config_fingerprint(config)
    assert not index_store.segment_wait(snapshot, config, fingerprint, timeout=0.01, wanted=lambda: True)
    index = index_store.shared_index_build(snapshot, config, fingerprint)
    assert index.content_digest == snapshot.content_digest == entries_digest(active.entries)
    assert calls == [1]  # 0.6 s at 100k entries, once per catalog snapshot
