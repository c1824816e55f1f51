"""The catalog reload after a change reads only the changed packages (issue 17: an edit visible within 1 s).

Every reload is compared with a full load of the same database state.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from knowledge import catalog as catalog_module
from knowledge.catalog import get_active_catalog
from knowledge.models import CatalogState, Package, PackageRevision, RevisionEmbedding, RevisionSearchTerms
from knowledge.selectors import catalog_version_get
from knowledge.services import package_set_active, package_update


def _edit(package_id: str, **changes) -> None:
    package = Package.objects.get(package_id=package_id)
    package_update(acting_user=None, package=package, data={**package.content(), **changes}, note="edit")


def _same_as_a_full_load(reloaded) -> None:
    full = catalog_module._load(reloaded.version)
    assert reloaded.entries == full.entries
    assert reloaded.vectors == full.vectors and reloaded.synonyms == full.synonyms
    assert reloaded.out_of_scope == full.out_of_scope
    assert reloaded.example_vectors == full.example_vectors
    assert reloaded._state.stamps == full._state.stamps


def _body_reads(queries) -> list[str]:
    """The SQL of the queries that read packages' bodies."""
    return [q["sql"] for q in queries if '"knowledge_package"."body"' in q["sql"]]


def test_a_one_package_edit_reads_that_package_whole_and_only_it(catalog):
    _edit("PRICING_RULES", body="Tabela nova da curadoria.")
    with CaptureQueriesContext(connection) as captured:
        reloaded = get_active_catalog()
    assert reloaded.get("PRICING_RULES").body == "Tabela nova da curadoria."
    # The version, the two fingerprints, the light list, the changed row, its terms, its vector, the synonyms,
    # the out-of-scope sets.
    assert len(captured.captured_queries) == 9
    bodies = _body_reads(captured.captured_queries)
    pk = Package.objects.get(package_id="PRICING_RULES").pk
    assert len(bodies) == 1 and f"IN ({pk})" in bodies[0]
    unchanged = [e for e in reloaded.entries if e.package_id != "PRICING_RULES"]
    assert all(e is catalog.get(e.package_id) for e in unchanged)  # the previous snapshot's objects
    _same_as_a_full_load(reloaded)


def test_a_version_bump_without_a_package_change_reads_no_body(catalog):
    from knowledge.services import _bump_version, _lock_catalog

    _bump_version(_lock_catalog())
    with CaptureQueriesContext(connection) as captured:
        reloaded = get_active_catalog()
    assert reloaded.version == catalog_version_get() and not _body_reads(captured.captured_queries)
    assert len(captured.captured_queries) == 6  # the version, two fingerprints, the light list, two sets
    assert all(a is b for a, b in zip(reloaded.entries, catalog.entries))


def test_deactivation_and_reordering_are_seen(catalog):
    package_set_active(acting_user=None, package=Package.objects.get(package_id="PRICING_RULES"), active=False)
    reloaded = get_active_catalog()
    assert reloaded.get("PRICING_RULES") is None and len(reloaded) == len(catalog) - 1
    _same_as_a_full_load(reloaded)
    Package.objects.filter(package_id="COMPANY_INFO").update(position=10_000)  # position is in the stamp too
    from knowledge.services import _bump_version, _lock_catalog

    _bump_version(_lock_catalog())
    reloaded = get_active_catalog()
    assert reloaded.ids[-1] == "COMPANY_INFO"
    _same_as_a_full_load(reloaded)


def test_accepted_search_terms_and_a_late_vector_reach_the_catalog_without_reading_bodies(catalog):
    from knowledge.services import _bump_version, _lock_catalog

    package = Package.objects.get(package_id="TARGETS_QPCR")
    revision = PackageRevision.objects.get(package=package, number=package.revision_number)
    RevisionSearchTerms.objects.create(
        revision=revision, status=RevisionSearchTerms.Status.ACCEPTED, accepted=["qpcr targets"]
    )
    _bump_version(_lock_catalog())
    with CaptureQueriesContext(connection) as captured:
        reloaded = get_active_catalog()
    assert reloaded.get("TARGETS_QPCR").search_terms == ("qpcr targets",)
    assert not _body_reads(captured.captured_queries)
    _same_as_a_full_load(reloaded)

    from common.text import retrieval_embeddings

    vector = np.arange(4, dtype="<f4").tobytes()
    RevisionEmbedding.objects.create(
        revision=revision, model_id=retrieval_embeddings.MODEL_ID, text_digest="x", vector=vector
    )
    _bump_version(_lock_catalog())
    with CaptureQueriesContext(connection) as captured:
        reloaded = get_active_catalog()
    assert reloaded.vectors["TARGETS_QPCR"] == vector and not _body_reads(captured.captured_queries)
    assert "TARGETS_QPCR" not in reloaded.example_vectors
    _same_as_a_full_load(reloaded)

    # Re-embedded with example questions (a new row, as knowledge/embeddings._store writes it): the
    # questions' own vectors come with it, and go again with a vector stored without them.
    examples = np.arange(8, dtype="<f4").tobytes()
    RevisionEmbedding.objects.filter(revision=revision).delete()
    RevisionEmbedding.objects.create(
        revision=revision,
        model_id=retrieval_embeddings.MODEL_ID,
        text_digest="y",
        vector=vector,
        example_vectors=examples,
    )
    _bump_version(_lock_catalog())
    reloaded = get_active_catalog()
    assert reloaded.example_vectors == {"TARGETS_QPCR": examples}
    _same_as_a_full_load(reloaded)
    RevisionEmbedding.objects.filter(revision=revision).delete()
    RevisionEmbedding.objects.create(
        revision=revision, model_id=retrieval_embeddings.MODEL_ID, text_digest="z", vector=vector
    )
    _bump_version(_lock_catalog())
    reloaded = get_active_catalog()
    assert reloaded.example_vectors == {}
    _same_as_a_full_load(reloaded)


def test_many_changes_fall_back_to_a_full_load(catalog, monkeypatch):
    monkeypatch.setattr(catalog_module, "RELOAD_MAX_CHANGED", 0)
    _edit("PRICING_RULES", body="Outra tabela.")
    with CaptureQueriesContext(connection) as captured:
        reloaded = get_active_catalog()
    assert len(_body_reads(captured.captured_queries)) == 1 and "IN (" not in _body_reads(captured.captured_queries)[0]
    _same_as_a_full_load(reloaded)


def test_a_revision_embedded_again_reaches_running_processes(catalog):
    # embed_packages re-embeds a revision whose text digest changed (the same revision, a new
    # vector): the row must not be rewritten in place, or the reload's fingerprint (count, last id)
    # never moves and running processes keep the old vector until they restart.
    from knowledge.embeddings import _store

    package = Package.objects.get(package_id="TARGETS_QPCR")
    revision = PackageRevision.objects.get(package=package, number=package.revision_number)
    first, second = np.full(4, 0.5, dtype="<f4"), np.full(4, 0.25, dtype="<f4")
    _store([(revision, "digest-1", (first, b""))])
    assert get_active_catalog().vectors["TARGETS_QPCR"] == first.tobytes()
    _store([(revision, "digest-2", (second, b""))])
    reloaded = get_active_catalog()
    assert reloaded.vectors["TARGETS_QPCR"] == second.tobytes()
    assert RevisionEmbedding.objects.filter(revision=revision).count() == 1
    _same_as_a_full_load(reloaded)


def _bump():
    from knowledge.services import _bump_version, _lock_catalog

    _bump_version(_lock_catalog())


def test_a_queryset_update_moves_the_stamp_and_is_seen(catalog):
    # update() writes no auto_now field: without the stamp moving, the reload kept the old entry.
    Package.objects.filter(package_id="PRICING_RULES").update(title="Preços (nova redação)")
    _bump()
    reloaded = get_active_catalog()
    assert reloaded.get("PRICING_RULES").title == "Preços (nova redação)"
    _same_as_a_full_load(reloaded)
    package = Package.objects.get(package_id="COMPANY_INFO")
    package.summary = "Resumo novo"
    Package.objects.bulk_update([package], ["summary"])  # bulk_update goes through update()
    _bump()
    assert get_active_catalog().get("COMPANY_INFO").summary == "Resumo novo"


def test_an_accepted_terms_queryset_update_is_seen(catalog):
    package = Package.objects.get(package_id="TARGETS_QPCR")
    revision = PackageRevision.objects.get(package=package, number=package.revision_number)
    terms = RevisionSearchTerms.objects.create(
        revision=revision, status=RevisionSearchTerms.Status.ACCEPTED, accepted=["qpcr targets"]
    )
    _bump()
    assert get_active_catalog().get("TARGETS_QPCR").search_terms == ("qpcr targets",)
    RevisionSearchTerms.objects.filter(pk=terms.pk).update(accepted=["qpcr panel"])
    _bump()
    assert get_active_catalog().get("TARGETS_QPCR").search_terms == ("qpcr panel",)


def test_reindex_picks_up_a_raw_sql_edit_in_every_process(catalog):
    from knowledge.routing_service import reindex

    table = Package._meta.db_table
    with connection.cursor() as cursor:  # around the ORM: no stamp moves, no version bump
        cursor.execute(f'UPDATE "{table}" SET "title" = %s WHERE "package_id" = %s', ["Editado à mão", "PRICING_RULES"])
    _bump()
    stale = get_active_catalog()
    assert stale.get("PRICING_RULES").title != "Editado à mão"  # what reindex is for
    other_process = stale  # another process holds the same snapshot; reindex reaches it through the database
    reindex()
    reloaded = catalog_module._reload(catalog_version_get(), other_process)
    assert reloaded.get("PRICING_RULES").title == "Editado à mão"
    assert get_active_catalog().get("PRICING_RULES").title == "Editado à mão"
    _same_as_a_full_load(reloaded)


@pytest.mark.django_db(transaction=True)
def test_reindex_stamps_in_batches_and_releases_the_catalog_lock_between_them(monkeypatch):
    from knowledge import services

    services.catalog_sync_bundled()
    version = catalog_version_get()
    stamps_before = dict(Package.objects.values_list("pk", "updated_at"))
    batches, probes = [], []
    stamp_batch = services._stamp_batch

    def probe() -> None:
        try:  # another process's edit: takes the catalog lock at once, sees the version unmoved
            with transaction.atomic():
                probes.append(CatalogState.objects.select_for_update(nowait=True).get(pk=1).version)
        except DatabaseError as exc:
            probes.append(type(exc).__name__)
        finally:
            connection.close()

    def batch_then_probe(queryset, **kwargs):
        pks = stamp_batch(queryset, **kwargs)
        batches.append((queryset.model.__name__, len(pks)))
        thread = threading.Thread(target=probe)
        thread.start()
        thread.join()
        return pks

    monkeypatch.setattr(services, "_stamp_batch", batch_then_probe)
    assert services.catalog_reload_everywhere(batch_size=7) == len(stamps_before)
    full, rest = divmod(len(stamps_before), 7)
    assert batches[: full + 2] == [("Package", 7)] * full + [("Package", rest)] * bool(rest) + [("Package", 0)]
    assert probes == [version] * len(batches)
    assert catalog_version_get() == version + 1  # once, after the last batch
    stamps_after = dict(Package.objects.values_list("pk", "updated_at"))
    assert all(stamps_after[pk] > stamp for pk, stamp in stamps_before.items())


def test_a_full_load_holds_the_vectors_in_one_block_not_one_object_each(catalog):
    # 100,000 bytes objects of 3.6 KB would stay in the process's heap after the router's dense
    # index takes the vectors over (Catalog.hold_vectors); one block is returned to the system whole.
    from common.text import retrieval_embeddings
    from knowledge.embeddings import _store

    stored = {}
    for i, package_id in enumerate(("TARGETS_QPCR", "PRICING_RULES", "DELIVERY_TIMELINES")):
        package = Package.objects.get(package_id=package_id)
        revision = PackageRevision.objects.get(package=package, number=package.revision_number)
        stored[package_id] = np.full(retrieval_embeddings.DIM, i + 1, dtype="<f4")
        _store([(revision, f"digest-{i}", (stored[package_id], b""))])
    vectors = catalog_module._load(catalog_version_get()).vectors
    assert {k: bytes(v) for k, v in vectors.items()} == {k: v.tobytes() for k, v in stored.items()}
    assert all(isinstance(v, memoryview) for v in vectors.values())
    assert len({id(v.obj) for v in vectors.values()}) == 1  # views into one matrix
