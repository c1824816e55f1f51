"""Chunk ingestion proposes the class (an embedding) before it locks the chunk's row, and stays
correct when two ingestions of one chunk run at once."""

import threading
import time

import pytest
from django.db import connection, connections

from ontology.models import Chunk, ChunkEvent
from ontology.routing.classifier import propose_class
from ontology.services import chunk_ingest
from ontology.services import chunks as chunk_service


def _row(sample_rows, chunk_id):
    return dict(next(r for r in sample_rows if r["chunk_id"] == chunk_id))


def _bare(row):
    """The record without its class: ingestion must propose one."""
    return {k: v for k, v in row.items() if k not in ("classe_ontologica", "subclasse")}


@pytest.fixture(autouse=True)
def bundled_ontology(transactional_db):
    """The classes, skills and schema migration 0002 loads: an earlier transactional test may have flushed them."""
    from ontology import loaders
    from ontology.models import MetadataSchema, OntologyClass, Skill

    loaders.load_classes(OntologyClass)
    loaders.load_skills(Skill, OntologyClass)
    loaders.load_schema(MetadataSchema)


@pytest.fixture
def proposals(monkeypatch):
    """Every class proposal ingestion asks for, with whether a transaction was open at the time."""
    calls: list[tuple[str, bool]] = []

    def watched(text):
        calls.append((text, connection.in_atomic_block))
        return propose_class(text)

    monkeypatch.setattr(chunk_service, "propose_class", watched)
    return calls


@pytest.mark.django_db(transaction=True)
def test_the_class_is_proposed_before_the_row_lock_and_only_for_a_change(sample_rows, proposals):
    row = _bare(_row(sample_rows, "sin_baixa_nodulacao"))
    assert chunk_ingest(acting_user=None, record=row).action == "created"
    assert proposals == [(row["texto"], False)]  # outside any transaction, so outside the row lock
    assert chunk_ingest(acting_user=None, record=row).action == "unchanged"
    assert len(proposals) == 1  # nothing to propose for an unchanged record
    changed = {**row, "texto": row["texto"] + " Observado também na safrinha."}
    assert chunk_ingest(acting_user=None, record=changed).action == "updated"
    assert proposals[-1] == (changed["texto"], False) and len(proposals) == 2


@pytest.mark.django_db(transaction=True)
def test_a_chunk_changed_after_the_unlocked_look_is_proposed_outside_the_lock(sample_rows, proposals, monkeypatch):
    row = _bare(_row(sample_rows, "sin_baixa_nodulacao"))
    chunk_ingest(acting_user=None, record=row)
    changed = {**row, "texto": row["texto"] + " Observado também na safrinha."}
    # The glance without a lock saw the record's own content (another ingestion changed it since).
    monkeypatch.setattr(chunk_service, "_stored_content", lambda chunk_id: (changed["texto"], changed))
    result = chunk_ingest(acting_user=None, record=changed)
    assert result.action == "updated"
    assert proposals[-1] == (changed["texto"], False)
    chunk = Chunk.objects.get(chunk_id=row["chunk_id"])
    assert chunk.text == changed["texto"] and chunk.proposed_class == propose_class(changed["texto"]).class_id


@pytest.mark.django_db(transaction=True)
def test_two_ingestions_of_one_new_chunk_at_once_both_succeed(sample_rows, monkeypatch):
    row = _bare(_row(sample_rows, "sin_baixa_nodulacao"))
    texts = [row["texto"], row["texto"] + " Observado também na safrinha."]
    both_proposing = threading.Barrier(2, timeout=10)

    def slow_proposal(text):
        both_proposing.wait()  # both ingestions are past their unlocked look: neither row exists yet
        time.sleep(0.2)
        return propose_class(text)

    monkeypatch.setattr(chunk_service, "propose_class", slow_proposal)
    results, errors = [], []

    def ingest(text):
        try:
            results.append(chunk_ingest(acting_user=None, record={**row, "texto": text}))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ingest, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert sorted(r.action for r in results) == ["created", "updated"]
    chunk = Chunk.objects.get(chunk_id=row["chunk_id"])
    assert chunk.text in texts and chunk.state == "indexed"
    assert chunk.proposed_class == propose_class(chunk.text).class_id  # the proposal of the text kept
    notes = list(ChunkEvent.objects.filter(chunk=chunk).values_list("note", flat=True))
    assert notes.count("ingested") == 1 and notes.count("content replaced by ingestion") == 1
