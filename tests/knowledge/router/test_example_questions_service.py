"""Example questions through the database: proposed with the search terms, accepted in the admin,
blended into the revision's stored vector (knowledge/search_terms.py, knowledge/embeddings.py)."""

import json

import numpy as np
import pytest

from common.text import retrieval_embeddings
from knowledge import search_terms
from knowledge.embeddings import revision_text
from knowledge.models import Package, RevisionEmbedding, RevisionSearchTerms
from knowledge.retrieval.dense import embedded_text, text_digest, with_examples
from knowledge.selectors import catalog_version_get

from .test_search_terms import BODY, configured_model

QUESTIONS = {
    "pt": ["Faltei porque passei mal, onde mando o papel do médico?"],
    "en": ["I was off sick, where do I send the doctor's paper?"],
    "es": ["Falté por enfermedad, ¿dónde mando el papel del médico?"],
}
FLAT = [q for lang in ("pt", "en", "es") for q in QUESTIONS[lang]]


@pytest.fixture
def model(monkeypatch):
    reply = {"en": ["doctor's note"], "es": ["certificado médico"], "questions": QUESTIONS}
    return configured_model(monkeypatch, json.dumps(reply))


@pytest.fixture(autouse=True)
def _on(settings):
    settings.KNOWLEDGE_SEARCH_TERMS_ON_SAVE = True


def test_the_proposal_carries_example_questions_per_language():
    proposal = search_terms.parse_proposal(
        json.dumps({"en": ["sick note"], "questions": {"pt": ["  Onde  mando?", "x" * 300], "fr": ["Où?"]}})
    )
    assert proposal == {"en": ["sick note"], "es": [], "questions": {"pt": ["Onde mando?"], "en": [], "es": []}}
    # Questions alone are a usable answer; terms alone still are (no "questions" key then).
    assert search_terms.parse_proposal(json.dumps({"questions": {"es": ["¿Dónde?"]}}))["es"] == []
    assert "questions" not in search_terms.parse_proposal(json.dumps({"en": ["sick note"]}))
    assert '"questions"' in search_terms.SYSTEM_PROMPT


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_accepted_questions_are_blended_into_the_revision_vector(
    make_package, django_capture_on_commit_callbacks, model, client, curator, settings
):
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    record = RevisionSearchTerms.objects.get(revision=revision)
    assert record.proposed["questions"] == QUESTIONS
    passage = RevisionEmbedding.objects.get(revision=revision)
    assert passage.text_digest == text_digest(revision_text(revision))  # no questions accepted yet

    client.force_login(curator)
    page = client.get(f"/admin/knowledge/revisionsearchterms/{record.pk}/change/").content.decode()
    assert "3 example questions" in page and "onde mando o papel do médico?" in page
    version = catalog_version_get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
            {"accepted": "doctor's note", "accepted_questions": "\n".join(FLAT)},
        )
    assert response.status_code == 302
    record.refresh_from_db()
    assert record.status == "accepted" and record.accepted_questions == FLAT
    stored = RevisionEmbedding.objects.get(revision=revision)
    assert stored.text_digest == text_digest(embedded_text(revision_text(revision), FLAT))
    vector = np.frombuffer(bytes(stored.vector), dtype="<f4")
    expected = with_examples(
        np.frombuffer(bytes(passage.vector), dtype="<f4"), retrieval_embeddings.embed_queries(FLAT)
    )
    assert np.allclose(vector, expected, atol=1e-5) and np.linalg.norm(vector) < 0.99
    assert catalog_version_get() > version

    # Accepting the same questions again (terms edited) embeds nothing.
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
            {"accepted": "doctor's note, sick note", "accepted_questions": "\n".join(FLAT)},
        )
    assert RevisionEmbedding.objects.get(revision=revision).pk == stored.pk


def test_a_question_too_long_is_refused_in_the_admin_and_nothing_is_saved(
    make_package, django_capture_on_commit_callbacks, model, client, curator
):
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    record = RevisionSearchTerms.objects.get(revision__package=package)
    client.force_login(curator)
    response = client.post(
        f"/admin/knowledge/revisionsearchterms/{record.pk}/change/",
        {"accepted": "doctor's note", "accepted_questions": "x" * 201},
    )
    assert response.status_code == 200 and "at most 200 characters" in response.content.decode()
    record.refresh_from_db()
    assert record.status == "proposed" and record.accepted_questions == []


def test_curators_accept_many_proposals_at_once_and_a_failed_ask_is_left_alone(
    make_package, django_capture_on_commit_callbacks, model, client, curator
):
    with django_capture_on_commit_callbacks(execute=True):
        first = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    model.reply = "I cannot help with that."
    with django_capture_on_commit_callbacks(execute=True):
        second = make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação.")
    proposed = RevisionSearchTerms.objects.get(revision__package=first)
    failed = RevisionSearchTerms.objects.get(revision__package=second)
    assert (proposed.status, failed.status) == ("proposed", "failed")
    version = catalog_version_get()

    client.force_login(curator)
    response = client.post(
        "/admin/knowledge/revisionsearchterms/",
        {"action": "accept_as_proposed", "_selected_action": [proposed.pk, failed.pk]},
        follow=True,
    )
    shown = [str(m) for m in response.context["messages"]]
    assert shown == [
        "Accepted as proposed: SICK_NOTES r1.",
        "Not waiting for a curator (accepted or failed), left as is: OVERTIME r1.",
    ]
    proposed.refresh_from_db()
    failed.refresh_from_db()
    assert proposed.status == "accepted" and proposed.reviewed_by == curator
    assert proposed.accepted == ["doctor's note", "certificado médico"] and proposed.accepted_questions == FLAT
    assert failed.status == "failed" and failed.accepted_questions == []
    assert catalog_version_get() == version + 1


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_the_sweep_re_embeds_a_revision_whose_questions_were_accepted_after_its_vector(
    make_package, django_capture_on_commit_callbacks, model, settings, monkeypatch, client, curator
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge import tasks
    from knowledge.embeddings import embedding_sweep

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    record = RevisionSearchTerms.objects.get(revision=revision)
    passage = RevisionEmbedding.objects.get(revision=revision)
    assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 0}

    # The accept's re-embedding task never reaches a worker (broker down): the passage vector stays.
    monkeypatch.setattr(tasks.embed_revision, "delay", lambda *a, **k: None)
    with django_capture_on_commit_callbacks(execute=True):
        search_terms.search_terms_accept(record=record, terms=["doctor's note"], questions=FLAT)
    assert RevisionEmbedding.objects.get(revision=revision).text_digest == passage.text_digest
    # The curator sees that the router does not use them yet, then that it does.
    client.force_login(curator)
    change = f"/admin/knowledge/revisionsearchterms/{record.pk}/change/"
    assert "not yet: waiting for the embedding task" in client.get(change).content.decode()

    assert embedding_sweep() == {"embedded": 1, "missing": 1, "unavailable": 0}
    assert f"vector: yes, {len(FLAT)} example questions" in client.get(change).content.decode()
    stored = RevisionEmbedding.objects.get(revision=revision)
    assert stored.text_digest == text_digest(embedded_text(revision_text(revision), FLAT))
    # Then nothing is stale any more: one query, nothing embedded.
    with CaptureQueriesContext(connection) as captured:
        assert embedding_sweep() == {"embedded": 0, "missing": 0, "unavailable": 0}
    assert len(captured.captured_queries) == 1


@pytest.fixture
def words_only(monkeypatch, settings, make_package):
    """The embedding model off and nothing embedded on save: what reaches the router is the questions'
    words. Returns a maker of the two packages those tests route between (SICK_NOTES, OVERTIME)."""
    monkeypatch.setattr(retrieval_embeddings, "enabled", lambda: False)
    settings.KNOWLEDGE_EMBED_ON_SAVE = False

    def packages(*, overtime: bool = True):
        sick = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
        if overtime:
            make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação do gestor.")
        return sick

    return packages


def _accept(capture, revision) -> None:
    """A curator accepts the model's terms and ``FLAT`` for ``revision``; the re-embedding runs."""
    with capture(execute=True):
        search_terms.search_terms_accept(
            record=RevisionSearchTerms.objects.get(revision=revision), terms=["doctor's note"], questions=FLAT
        )


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_the_questions_own_vectors_are_stored_and_reach_the_router_built_whole_or_by_delta(
    make_package, django_capture_on_commit_callbacks, model, settings
):
    from knowledge import routing_service
    from knowledge.catalog import get_active_catalog
    from knowledge.index_store import delta_index

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
        make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação do gestor.")
    revision = package.revisions.get()
    assert bytes(RevisionEmbedding.objects.get(revision=revision).example_vectors) == b""
    _accept(django_capture_on_commit_callbacks, revision)

    stored = RevisionEmbedding.objects.get(revision=revision)
    rows = np.frombuffer(bytes(stored.example_vectors), dtype="<f4").reshape(len(FLAT), retrieval_embeddings.DIM)
    assert np.allclose(rows, retrieval_embeddings.embed_queries(FLAT), atol=1e-5)
    catalog = get_active_catalog()
    assert set(catalog.example_vectors) == {"SICK_NOTES"}

    index = routing_service.reindex()
    slot = index.position["SICK_NOTES"]
    assert index.dense.example_slots.tolist() == [slot]
    question = retrieval_embeddings.embed_query(FLAT[1])  # worded as one of its example questions
    plain = index.dense.similarities(question)[slot]
    assert index.dense.similarities(question, 0.3)[slot] == pytest.approx(0.7 * plain + 0.3, abs=1e-4)

    # An edit to another package is applied as a delta over this index: the examples stay attached.
    with django_capture_on_commit_callbacks(execute=True):
        make_package("DAYCARE", title="Auxílio-creche", summary="Reembolso.", body="Reembolso mensal de creche.")
    merged = delta_index(index, get_active_catalog(), routing_service.router_config())
    assert merged is not None and merged.dense is not None
    assert merged.dense.example_slots.tolist() == [merged.position["SICK_NOTES"]]


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_a_blend_stored_before_the_questions_vectors_were_kept_is_dropped_and_recomputed(
    make_package, django_capture_on_commit_callbacks, model, settings
):
    import importlib

    from django.apps import apps

    from knowledge.embeddings import embedding_sweep

    migration = importlib.import_module("knowledge.migrations.0012_revision_embedding_example_vectors")
    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
        other = make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação.")
    revision = package.revisions.get()
    _accept(django_capture_on_commit_callbacks, revision)
    # As the previous release stored it: the blend without the questions' own vectors.
    RevisionEmbedding.objects.filter(revision=revision).update(example_vectors=b"")
    migration.drop_blends_without_rows(apps, None)
    assert not RevisionEmbedding.objects.filter(revision=revision).exists()
    assert RevisionEmbedding.objects.filter(revision=other.revisions.get()).exists()  # no questions: kept

    assert embedding_sweep() == {"embedded": 1, "missing": 1, "unavailable": 0}
    stored = RevisionEmbedding.objects.get(revision=revision)
    assert len(bytes(stored.example_vectors)) == len(FLAT) * retrieval_embeddings.DIM * 4


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_a_known_blend_without_the_questions_vectors_is_not_reused(
    make_package, django_capture_on_commit_callbacks, model, settings
):
    from knowledge.embeddings import _vectors

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    _accept(django_capture_on_commit_callbacks, revision)
    stored = RevisionEmbedding.objects.get(revision=revision)
    # Another revision with this text and these questions (an activation, a revert) reuses the row...
    pending = [(revision, revision_text(revision), stored.text_digest, FLAT)]
    reused, examples = _vectors(pending)[0]
    assert examples == bytes(stored.example_vectors) and reused.tobytes() == bytes(stored.vector)
    # ...but not one stored before the questions' own vectors were kept: those are computed again.
    RevisionEmbedding.objects.filter(pk=stored.pk).update(example_vectors=b"")
    vector, examples = _vectors(pending)[0]
    assert len(examples) == len(FLAT) * retrieval_embeddings.DIM * 4
    assert np.allclose(vector, reused, atol=1e-5)


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_the_questions_rows_are_in_the_shared_vectors_file_and_the_catalog_keeps_no_copy(
    make_package, django_capture_on_commit_callbacks, model, settings, tmp_path, monkeypatch
):
    # The Celery task streams the rows into the vectors file; a process maps it without writing, its
    # catalog keeps views into that mapping (not its own bytes), and an edit's delta keeps the mapping.
    from knowledge import routing_service
    from knowledge.catalog import get_active_catalog
    from knowledge.index_store import delta_index, router_index_prepare
    from knowledge.retrieval import dense_segment
    from knowledge.retrieval.segments import is_mapped

    settings.KNOWLEDGE_EMBED_ON_SAVE = True
    settings.KNOWLEDGE_INDEX_DIR = tmp_path / "index"
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
        make_package("OVERTIME", title="Hora extra", summary="Aprovação.", body="Precisa de aprovação do gestor.")
    _accept(django_capture_on_commit_callbacks, package.revisions.get())
    stored = bytes(RevisionEmbedding.objects.get(revision=package.revisions.get()).example_vectors)

    assert router_index_prepare()["vectors"] == "built"
    (meta,) = (tmp_path / "index" / "vectors").glob("v*/meta.json")
    assert json.loads(meta.read_text())["example_rows"] == len(FLAT)
    # As loaded: a view into one block of the load (not a bytes object per package, which the heap keeps).
    loaded = get_active_catalog().example_vectors["SICK_NOTES"]
    assert isinstance(loaded, memoryview) and isinstance(loaded.obj, bytearray) and loaded == stored
    monkeypatch.setattr(dense_segment, "dense_segment_write", lambda *a, **k: pytest.fail("a process wrote it"))
    index = routing_service.reindex()
    ((rows, slots, _, _),) = index.dense.example_groups
    assert is_mapped(rows) and slots.tolist() == [index.position["SICK_NOTES"]]
    held = get_active_catalog().example_vectors["SICK_NOTES"]
    assert isinstance(held, memoryview) and held == stored
    assert np.shares_memory(np.frombuffer(held, dtype=np.uint8), rows)

    with django_capture_on_commit_callbacks(execute=True):
        make_package("DAYCARE", title="Auxílio-creche", summary="Reembolso.", body="Reembolso mensal de creche.")
    merged = delta_index(index, get_active_catalog(), routing_service.router_config())
    assert merged.dense.example_groups[0][0] is rows and merged.dense.example_slots.tolist() == [
        merged.position["SICK_NOTES"]
    ]
    assert np.shares_memory(np.frombuffer(get_active_catalog().example_vectors["SICK_NOTES"], dtype=np.uint8), rows)
    question = retrieval_embeddings.embed_query(FLAT[1])
    slot = merged.position["SICK_NOTES"]
    assert merged.dense.similarities(question, 0.3)[slot] == pytest.approx(
        index.dense.similarities(question, 0.3)[index.position["SICK_NOTES"]], abs=1e-6
    )


def test_the_admin_says_a_revision_without_a_body_never_gets_its_questions_in_the_router(
    make_package, django_capture_on_commit_callbacks, model, settings, client, curator, monkeypatch
):
    # Such a revision is never embedded (nothing to embed): "not yet" would wait forever.
    from knowledge.models import PackageRevision

    monkeypatch.setattr(retrieval_embeddings, "enabled", lambda: True)
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    _accept(django_capture_on_commit_callbacks, revision)
    record = RevisionSearchTerms.objects.get(revision=revision)
    client.force_login(curator)
    change = f"/admin/knowledge/revisionsearchterms/{record.pk}/change/"
    assert "no: a revision without a body" not in client.get(change).content.decode()
    PackageRevision.objects.filter(pk=revision.pk).update(data={**revision.data, "body": "  "})
    page = client.get(change).content.decode()
    assert "no: a revision without a body is not in the router, and never embedded" in page
    assert "not yet" not in page and "words: yes" not in page


def test_the_admin_says_an_older_revisions_questions_are_not_the_ones_the_router_reads(
    make_package, django_capture_on_commit_callbacks, model, settings, client, curator, monkeypatch
):
    # The router reads the current revision only: an older revision's accepted questions, even embedded,
    # are not in it ("yes" would mislead the curator).
    from knowledge.services import package_update

    monkeypatch.setattr(retrieval_embeddings, "enabled", lambda: True)
    settings.KNOWLEDGE_EMBED_ON_SAVE = False
    with django_capture_on_commit_callbacks(execute=True):
        package = make_package("SICK_NOTES", title="Atestados", summary="Prazo de entrega.", body=BODY)
    revision = package.revisions.get()
    _accept(django_capture_on_commit_callbacks, revision)
    record = RevisionSearchTerms.objects.get(revision=revision)
    client.force_login(curator)
    change = f"/admin/knowledge/revisionsearchterms/{record.pk}/change/"
    assert "no: the router reads" not in client.get(change).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        package_update(acting_user=None, package=package, data={**package.content(), "title": "Atestados médicos"})
    page = client.get(change).content.decode()
    assert "no: the router reads the package&#x27;s current revision (r2), not this one" in page
    assert "not yet" not in page


def test_accepted_questions_words_reach_the_router_at_once_and_follow_a_curators_edit(
    words_only, django_capture_on_commit_callbacks, model, client, curator
):
    # Their words need no embedding task: the next catalog version routes with them (the model is off here).
    from knowledge import routing_service
    from knowledge.catalog import get_active_catalog
    from knowledge.index_store import delta_index

    from .conftest import find, why_signals

    with django_capture_on_commit_callbacks(execute=True):
        package = words_only()
    question = "Passei mal ontem, pra onde mando o papel?"  # no word of the package's own text
    routing_service.reindex()
    assert "SICK_NOTES" not in routing_service.route_context(message=question, use_cache=False).delivered_ids

    revision = package.revisions.get()
    _accept(django_capture_on_commit_callbacks, revision)
    assert get_active_catalog().get("SICK_NOTES").example_questions == tuple(FLAT)
    delivered = find(routing_service.route_context(message=question, use_cache=False), "SICK_NOTES")
    assert delivered is not None and "questions" in why_signals(delivered) and delivered.shape == "listed"
    client.force_login(curator)
    record = RevisionSearchTerms.objects.get(revision=revision)
    page = client.get(f"/admin/knowledge/revisionsearchterms/{record.pk}/change/").content.decode()
    assert "words: yes, for messages of one part · vector: no, the embedding model is off" in page

    # A curator's edit of the questions alone (no package row changes) reaches the router's next index,
    # applied as a delta over a base that already holds questions (only the touched terms rebuilt).
    base = routing_service.reindex()
    assert base.questions is not None
    with django_capture_on_commit_callbacks(execute=True):
        search_terms.search_terms_accept(
            record=record, terms=["doctor's note"], questions=["Fiquei doente na sexta, a quem aviso?"]
        )
    assert get_active_catalog().get("SICK_NOTES").example_questions == ("Fiquei doente na sexta, a quem aviso?",)
    merged = delta_index(base, get_active_catalog(), routing_service.router_config())
    assert merged is not None and merged.delta_base is base and merged.questions is not base.questions
    for routed in (merged.route(question), routing_service.route_context(message=question, use_cache=False)):
        assert "SICK_NOTES" not in routed.delivered_ids
    now = "Fiquei doente na sexta, o que faço?"
    for routed in (merged.route(now), routing_service.route_context(message=now, use_cache=False)):
        assert "questions" in why_signals(find(routed, "SICK_NOTES"))


def test_the_admin_says_when_the_router_has_no_words_from_the_questions(
    words_only, django_capture_on_commit_callbacks, model, settings, client, curator
):
    from knowledge.services import package_set_active

    with django_capture_on_commit_callbacks(execute=True):
        package = words_only(overtime=False)
    revision = package.revisions.get()
    record = RevisionSearchTerms.objects.get(revision=revision)
    client.force_login(curator)
    change = f"/admin/knowledge/revisionsearchterms/{record.pk}/change/"
    # Questions of stop words only index nothing.
    search_terms.search_terms_accept(record=record, terms=[], questions=["Como?", "O que é isso?"])
    assert "words: no, the questions hold only stop words" in client.get(change).content.decode()
    search_terms.search_terms_accept(record=record, terms=[], questions=FLAT)
    assert "words: yes, for messages of one part" in client.get(change).content.decode()
    settings.KNOWLEDGE_ROUTER_WEIGHTS = {"questions": 0}
    assert "words: no, the questions signal weighs 0" in client.get(change).content.decode()
    # An inactive package is not in the catalog the router reads (its deactivation is a new revision).
    package_set_active(acting_user=None, package=package, active=False)
    page = client.get(change).content.decode()
    assert "no: the package is inactive, so it is not in the router" in page and "words:" not in page


def test_a_deactivation_and_reactivation_keep_the_accepted_terms_and_questions(
    words_only, django_capture_on_commit_callbacks, model, client, curator
):
    # Toggling a package writes revisions without new content: the router reads the current revision's
    # accepted terms and questions only, so they are carried forward, not lost.
    from knowledge import routing_service
    from knowledge.catalog import get_active_catalog
    from knowledge.services import package_set_active

    from .conftest import find, why_signals

    with django_capture_on_commit_callbacks(execute=True):
        package = words_only()
    _accept(django_capture_on_commit_callbacks, package.revisions.get())
    with django_capture_on_commit_callbacks(execute=True):
        package_set_active(acting_user=None, package=package, active=False)
        package_set_active(acting_user=None, package=package, active=True)
    package.refresh_from_db()
    assert package.revision_number == 3
    carried = RevisionSearchTerms.objects.get(revision__package=package, revision__number=3)
    assert carried.status == RevisionSearchTerms.Status.ACCEPTED and carried.accepted_questions == FLAT
    entry = get_active_catalog().get("SICK_NOTES")
    assert entry.example_questions == tuple(FLAT) and entry.search_terms == ("doctor's note",)
    routed = routing_service.route_context(message="Passei mal ontem, pra onde mando o papel?", use_cache=False)
    assert "questions" in why_signals(find(routed, "SICK_NOTES"))
    client.force_login(curator)
    page = client.get(f"/admin/knowledge/revisionsearchterms/{carried.pk}/change/").content.decode()
    assert "words: yes, for messages of one part" in page
    # A package never proposed for carries nothing.
    other = Package.objects.get(package_id="OVERTIME")
    RevisionSearchTerms.objects.filter(revision__package=other).delete()
    with django_capture_on_commit_callbacks(execute=True):
        package_set_active(acting_user=None, package=other, active=False)
    assert not RevisionSearchTerms.objects.filter(revision__package=other).exists()
