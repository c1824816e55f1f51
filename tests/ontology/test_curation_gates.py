"""The critical-class gate through every strategy, class edits, and re-running ingestion."""

import json

import pytest
from django.core.management import call_command

from ontology.models import Chunk, ChunkState, OntologyClass
from ontology.routing.search import analyze
from ontology.routing.strategies import casos_semelhantes, graphrag, hibrida, raptor
from ontology.selectors import indexed_corpus
from ontology.services import chunk_ingest, ontology_route

from .conftest import SEED_MESSAGE, SEED_SKILLS

pytestmark = pytest.mark.django_db

CRITICAL = ("intervencao", "dosagem", "contraindicacao")
QUERY = "reinoculação inoculante bradirrizóbio dose calcário nodulação"
FILTERS = {"classe_ontologica": [*CRITICAL, "pratica"]}


def _strategy_runs(corpus):
    """Each strategy with a query and filters under which it does reach critical chunks."""
    terms = analyze(QUERY)
    return {
        "hibrida": hibrida(corpus, terms, FILTERS),
        "graphrag": graphrag(corpus, terms, FILTERS),
        "raptor": raptor(corpus, terms, FILTERS),
        # the one case-type critical chunk is the seed's own example (an intervention)
        "casos_semelhantes": casos_semelhantes(corpus, analyze("descompactação biológica crotalária"), {}),
    }


def _critical_ids(run):
    return {h.record.chunk_id for h in run.hits if h.record.class_id in CRITICAL}


def _route_critical_ids(tenant, message):
    result = ontology_route(tenant=tenant, message=message, skills=list(SEED_SKILLS))
    ids = Chunk.objects.filter(chunk_id__in=result.outcome.chunk_ids, ontology_class__slug__in=CRITICAL)
    return set(ids.values_list("chunk_id", flat=True))


def test_with_a_validator_every_strategy_reaches_critical_chunks(tenant, sample_chunks):
    # the control for the test below: the gate, not the queries, keeps them out there
    for name, run in _strategy_runs(indexed_corpus()).items():
        assert _critical_ids(run), name
    assert _route_critical_ids(tenant, SEED_MESSAGE)  # multi_hop_guiado's intervention step


def test_unvalidated_critical_chunks_forced_to_indexed_are_never_retrieved_by_any_strategy(tenant, sample_rows, capsys):
    for row in sample_rows:
        chunk_ingest(acting_user=None, record=row)
    # whatever path sets the state (a raw update, a buggy script), no validator → not retrievable
    forced = Chunk.objects.filter(ontology_class__slug__in=CRITICAL).update(state=ChunkState.INDEXED)
    assert forced == sum(r["classe_ontologica"] in CRITICAL for r in sample_rows)
    corpus = indexed_corpus()
    assert not {r.chunk_id for r in corpus.records if r.class_id in CRITICAL}
    for name, run in _strategy_runs(corpus).items():
        assert not _critical_ids(run), name
    for message in (SEED_MESSAGE, "como melhorar a nodulação da soja?", "quanto inoculante por hectare?"):
        assert not _route_critical_ids(tenant, message), message


def test_a_class_made_critical_in_the_admin_drops_its_unvalidated_chunks_at_once(tenant, sample_chunks):
    practices = {r["chunk_id"] for r in sample_chunks if r["classe_ontologica"] == "pratica"}
    assert practices <= {r.chunk_id for r in indexed_corpus().records}  # cached now
    cls = OntologyClass.objects.get(slug="pratica")
    cls.critical = True
    cls.save()  # what the admin's change form does
    assert not practices & {r.chunk_id for r in indexed_corpus().records}
    result = ontology_route(tenant=tenant, message="quais práticas melhoram a nodulação?", skills=list(SEED_SKILLS))
    assert not practices & set(result.outcome.chunk_ids)


def _write(tmp_path, rows):
    path = tmp_path / "chunks.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_rerunning_ingest_with_a_validator_indexes_the_critical_chunks_left_waiting(
    tmp_path, sample_rows, validator, capsys
):
    rows = [r for r in sample_rows if r["chunk_id"] in ("int_reinoculacao", "sin_compactacao")]
    path = _write(tmp_path, rows)
    call_command("ingest_chunks", str(path), "--no-progress")
    assert "1 indexed, 1 awaiting curator validation" in capsys.readouterr().out
    assert Chunk.objects.get(chunk_id="int_reinoculacao").state == ChunkState.TAGGED

    call_command("ingest_chunks", str(path), "--no-progress", "--validator", validator.username)
    out = capsys.readouterr().out
    assert "0 created, 0 updated, 2 unchanged; 2 indexed, 0 awaiting curator validation" in out
    chunk = Chunk.objects.get(chunk_id="int_reinoculacao")
    assert (chunk.state, chunk.validated_by) == (ChunkState.INDEXED, validator)
    assert "int_reinoculacao" in {r.chunk_id for r in indexed_corpus().records}

    # and a run without a validator still leaves an unchanged waiting chunk where it is
    Chunk.objects.filter(chunk_id="int_reinoculacao").update(state=ChunkState.TAGGED, validated_by=None)
    call_command("ingest_chunks", str(path), "--no-progress")
    assert "1 awaiting curator validation" in capsys.readouterr().out
    assert Chunk.objects.get(chunk_id="int_reinoculacao").state == ChunkState.TAGGED


def test_reingesting_without_an_optional_field_drops_it(sample_rows):
    row = next(r for r in sample_rows if r["chunk_id"] == "sin_compactacao")
    chunk_ingest(acting_user=None, record=row)
    result = chunk_ingest(acting_user=None, record={k: v for k, v in row.items() if k != "estruturas_fortalecidas"})
    assert result.action == "updated"
    chunk = Chunk.objects.get(chunk_id="sin_compactacao")
    assert "estruturas_fortalecidas" not in chunk.metadata and chunk.state == ChunkState.INDEXED
    # the same record again is a no-op, derived fields (schema version) notwithstanding
    again = chunk_ingest(acting_user=None, record={k: v for k, v in row.items() if k != "estruturas_fortalecidas"})
    assert again.action == "unchanged"
