"""Chunks: metadata schema, ingestion states, curation gates, ingest command, re-indexing."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from ontology.exceptions import ChunkMetadataInvalid, CriticalValidationForbidden, IllegalChunkTransition
from ontology.models import Chunk, ChunkEvent, ChunkState, MetadataSchema, OntologyClass, Skill
from ontology.routing.data import CURRENT_SCHEMA_VERSION
from ontology.selectors import indexed_corpus
from ontology.services import (
    chunk_accept_proposal,
    chunk_index,
    chunk_ingest,
    chunk_metadata_update,
    chunk_send_back,
    chunk_validate,
    chunks_reindex,
    metadata_schema_activate,
    metadata_validate,
)

pytestmark = pytest.mark.django_db


def _row(sample_rows, chunk_id):
    return dict(next(r for r in sample_rows if r["chunk_id"] == chunk_id))


def test_the_migration_loads_the_16_classes_the_skills_and_the_current_schema():
    assert OntologyClass.objects.count() == 16
    assert set(OntologyClass.objects.filter(critical=True).values_list("slug", flat=True)) == {
        "intervencao",
        "dosagem",
        "contraindicacao",
    }
    cerrado = Skill.objects.get(slug="bioma_cerrado")
    assert cerrado.ontology_class.slug == "agroecossistema"
    assert cerrado.rag_bias == {"graphrag": 0.45, "casos_semelhantes": 0.30, "hibrida": 0.15, "raptor": 0.10}
    assert Skill.objects.get(slug="erosao_avancada").critical
    assert MetadataSchema.objects.get(is_current=True).version == CURRENT_SCHEMA_VERSION


def test_every_sample_chunk_matches_the_schema(sample_rows):
    for row in sample_rows:
        metadata_validate({k: v for k, v in row.items() if k not in ("chunk_id", "texto")})


@pytest.mark.parametrize(
    "change, field",
    [
        ({"bioma": ["Cerrado"]}, "bioma[0]"),
        ({"confiabilidade": 1.7}, "confiabilidade"),
        ({"ano": "2024"}, "ano"),
        ({"escala": "fazenda"}, "escala"),
        ({"cor": "verde"}, "cor"),
        ({"praticas_associadas": ["Plantio Direto"]}, "praticas_associadas[0]"),
        ({"classe_ontologica": "praga"}, "classe_ontologica"),
    ],
)
def test_a_bad_metadata_field_is_a_clear_error_naming_it(sample_rows, change, field):
    metadata = {k: v for k, v in _row(sample_rows, "sin_compactacao").items() if k not in ("chunk_id", "texto")}
    with pytest.raises(ChunkMetadataInvalid) as exc:
        metadata_validate({**metadata, **change})
    assert exc.value.code == "CHUNK_METADATA_INVALID"
    assert f"'{field}'" in exc.value.message
    assert exc.value.details["errors"][0]["field"] == field
    assert exc.value.details["schema_version"] == CURRENT_SCHEMA_VERSION


def test_a_missing_required_field_is_named(sample_rows):
    metadata = {
        k: v for k, v in _row(sample_rows, "sin_compactacao").items() if k not in ("chunk_id", "texto", "fonte")
    }
    with pytest.raises(ChunkMetadataInvalid) as exc:
        metadata_validate(metadata)
    assert exc.value.details["errors"][0]["field"] == "fonte"


def test_ingest_walks_the_states_and_indexes_a_non_critical_chunk(sample_rows):
    result = chunk_ingest(acting_user=None, record=_row(sample_rows, "sin_baixa_nodulacao"))
    assert (result.action, result.state, result.awaiting_curator) == ("created", "indexed", False)
    chunk = Chunk.objects.get(chunk_id="sin_baixa_nodulacao")
    assert list(chunk.events.values_list("to_state", flat=True)) == [
        "captured",
        "classified",
        "tagged",
        "validated",
        "indexed",
    ]
    assert chunk.proposed_class == "sintoma"
    assert chunk.ontology_class.slug == "sintoma" and chunk.subclass == "planta"
    again = chunk_ingest(acting_user=None, record=_row(sample_rows, "sin_baixa_nodulacao"))
    assert again.action == "unchanged"


def test_the_classifier_proposes_the_class_when_the_record_has_none(sample_rows):
    row = _row(sample_rows, "dos_molibdenio_cobalto")
    del row["classe_ontologica"], row["subclasse"]
    chunk_ingest(acting_user=None, record=row, index=False)
    chunk = Chunk.objects.get(chunk_id="dos_molibdenio_cobalto")
    assert (chunk.proposed_class, chunk.proposed_subclass) == ("dosagem", "nutriente")
    assert chunk.metadata["classe_ontologica"] == "dosagem" and chunk.state == ChunkState.TAGGED


def test_an_unvalidated_critical_chunk_waits_for_a_curator_and_is_never_retrieved(sample_rows):
    result = chunk_ingest(acting_user=None, record=_row(sample_rows, "int_reinoculacao"))
    assert (result.state, result.awaiting_curator) == ("tagged", True)
    chunk_ingest(acting_user=None, record=_row(sample_rows, "sin_baixa_nodulacao"))
    assert [r.chunk_id for r in indexed_corpus().records] == ["sin_baixa_nodulacao"]


def test_only_a_curator_with_the_permission_validates_a_critical_chunk(sample_rows, curator, validator):
    chunk_ingest(acting_user=None, record=_row(sample_rows, "int_reinoculacao"))
    chunk = Chunk.objects.get(chunk_id="int_reinoculacao")
    plain_curator = type(curator).objects.create_user(username="plain", is_staff=True)
    with pytest.raises(CriticalValidationForbidden) as exc:
        chunk_validate(acting_user=plain_curator, chunk=chunk)
    assert exc.value.status_code == 403
    with pytest.raises(CriticalValidationForbidden):
        chunk_index(acting_user=plain_curator, chunk=chunk)  # tagged, never validated by a holder
    chunk_index(acting_user=validator, chunk=chunk_validate(acting_user=validator, chunk=chunk))
    chunk.refresh_from_db()
    assert chunk.state == ChunkState.INDEXED and chunk.validated_by == validator
    assert [r.chunk_id for r in indexed_corpus().records] == ["int_reinoculacao"]


def test_a_critical_chunk_forced_to_indexed_without_validation_is_still_not_retrieved(sample_rows):
    chunk_ingest(acting_user=None, record=_row(sample_rows, "dos_calcario_saturacao"))
    Chunk.objects.filter(chunk_id="dos_calcario_saturacao").update(state=ChunkState.INDEXED)
    assert indexed_corpus().records == ()


def test_editing_an_indexed_critical_chunk_sends_it_back_for_validation(sample_rows, validator):
    chunk_ingest(acting_user=None, record=_row(sample_rows, "int_reinoculacao"), validator=validator)
    chunk = Chunk.objects.get(chunk_id="int_reinoculacao")
    assert chunk.state == ChunkState.INDEXED
    chunk_metadata_update(acting_user=validator, chunk=chunk, metadata={**chunk.metadata, "ano": 2021})
    chunk.refresh_from_db()
    assert chunk.state == ChunkState.TAGGED and chunk.validated_by is None
    assert indexed_corpus().records == ()


def test_illegal_transitions_are_refused_and_a_no_op_is_a_no_op(sample_rows, validator):
    chunk_ingest(acting_user=None, record=_row(sample_rows, "sin_compactacao"))
    chunk = Chunk.objects.get(chunk_id="sin_compactacao")
    events = chunk.events.count()
    chunk_index(acting_user=validator, chunk=chunk)  # already indexed: no-op
    assert chunk.events.count() == events
    with pytest.raises(IllegalChunkTransition) as exc:
        chunk_accept_proposal(acting_user=validator, chunk=chunk)
    assert exc.value.code == "ILLEGAL_CHUNK_TRANSITION"
    chunk_send_back(acting_user=validator, chunk=chunk)
    chunk.refresh_from_db()
    assert chunk.state == ChunkState.TAGGED


def test_a_schema_change_marks_chunks_and_reindex_revalidates_them(sample_rows, validator):
    for chunk_id in ("sin_compactacao", "pro_agregacao"):
        chunk_ingest(acting_user=None, record=_row(sample_rows, chunk_id))
    current = MetadataSchema.objects.get(is_current=True).schema
    stricter = json.loads(json.dumps(current))
    stricter["properties"]["versao_schema"] = {"const": "ontologia_v3"}
    stricter["properties"]["ano"]["minimum"] = 2010  # sin_compactacao (2025) passes, pro_agregacao (2004) fails
    MetadataSchema.objects.create(version="ontologia_v3", schema=stricter)
    marked = metadata_schema_activate(acting_user=validator, version="ontologia_v3")
    assert marked == 2
    assert set(Chunk.objects.filter(needs_reindex=True).values_list("chunk_id", flat=True)) == {
        "sin_compactacao",
        "pro_agregacao",
    }
    call_command("reindex_chunks")
    ok = Chunk.objects.get(chunk_id="sin_compactacao")
    bad = Chunk.objects.get(chunk_id="pro_agregacao")
    assert (ok.schema_version, ok.needs_reindex, ok.state) == ("ontologia_v3", False, ChunkState.INDEXED)
    assert ok.metadata["versao_schema"] == "ontologia_v3"
    assert bad.needs_reindex and bad.state == ChunkState.TAGGED and "'ano'" in bad.last_error
    assert [r.chunk_id for r in indexed_corpus().records] == ["sin_compactacao"]
    assert chunks_reindex(acting_user=None) == {"reindexed": 0, "failed": 1}


def _write_jsonl(tmp_path, lines):
    path = tmp_path / "chunks.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ingest_command_reports_a_bad_line_by_number_and_keeps_the_others(tmp_path, sample_rows, capsys):
    good1 = _row(sample_rows, "sin_compactacao")
    bad_field = {**_row(sample_rows, "pro_agregacao"), "bioma": ["marte"]}
    good2 = _row(sample_rows, "pra_rotacao")
    path = _write_jsonl(tmp_path, [json.dumps(good1), json.dumps(bad_field), "{not json", json.dumps(good2)])
    with pytest.raises(CommandError) as exc:
        call_command("ingest_chunks", str(path), "--no-progress")
    assert "2 line(s) failed" in str(exc.value)
    out, err = capsys.readouterr()
    assert "line 2 (pro_agregacao): CHUNK_METADATA_INVALID: Invalid chunk metadata field 'bioma[0]'" in err
    assert "line 3: invalid JSON" in err
    assert "ingested 2 created, 0 updated, 0 unchanged; 2 indexed" in out
    assert set(Chunk.objects.values_list("chunk_id", flat=True)) == {"sin_compactacao", "pra_rotacao"}
    # the failed line left nothing behind: no chunk, no event
    assert not ChunkEvent.objects.filter(chunk__chunk_id="pro_agregacao").exists()


def test_a_bad_line_updating_an_existing_chunk_leaves_the_stored_chunk_untouched(tmp_path, sample_rows):
    row = _row(sample_rows, "sin_compactacao")
    chunk_ingest(acting_user=None, record=row)
    before = Chunk.objects.get(chunk_id="sin_compactacao")
    path = _write_jsonl(tmp_path, [json.dumps({**row, "texto": "novo texto", "escala": "planeta"})])
    with pytest.raises(CommandError):
        call_command("ingest_chunks", str(path), "--no-progress")
    after = Chunk.objects.get(chunk_id="sin_compactacao")
    assert (after.text, after.state, after.metadata) == (before.text, before.state, before.metadata)


def test_ingest_command_with_a_validator_indexes_the_whole_sample(sample_rows, validator, capsys):
    call_command("load_ontology", "--sample-chunks", "--validator", validator.username)
    out = capsys.readouterr().out
    assert f"ingested {len(sample_rows)} created" in out and "0 failed" in out
    assert Chunk.objects.filter(state=ChunkState.INDEXED).count() == len(sample_rows)
    assert len(indexed_corpus()) == len(sample_rows)


def test_ingest_command_without_a_validator_leaves_critical_chunks_for_curators(sample_rows, capsys):
    call_command("load_ontology", "--sample-chunks")
    critical = sum(r["classe_ontologica"] in ("intervencao", "dosagem", "contraindicacao") for r in sample_rows)
    out = capsys.readouterr().out
    assert f"{critical} awaiting curator validation" in out
    assert Chunk.objects.filter(state=ChunkState.TAGGED).count() == critical


def test_ingest_command_refuses_a_validator_without_the_permission(tmp_path, curator):
    path = _write_jsonl(tmp_path, ["{}"])
    with pytest.raises(CommandError, match="lacks ontology.validate_critical_chunk"):
        call_command("ingest_chunks", str(path), "--validator", curator.username)


def test_ingest_command_shows_a_progress_bar(tmp_path, sample_rows, capsys):
    path = _write_jsonl(tmp_path, [json.dumps(_row(sample_rows, "sin_compactacao"))])
    call_command("ingest_chunks", str(path))
    err = capsys.readouterr().err
    assert "chunks: 100%" in err and "1/1" in err


@pytest.mark.parametrize(
    "change, field",
    [
        ({"rag_bias": {"vetorial": 0.5}}, "rag_bias"),
        ({"rag_bias": {"hibrida": 1.5}}, "rag_bias"),
        ({"index_filters": {"bioma": 3}}, "index_filters"),
        ({"index_filters": {"biome": "cerrado"}}, "index_filters"),
        ({"situational": True, "activation": {}}, "activation"),
    ],
)
def test_skill_validation_names_the_bad_field(change, field):
    from django.core.exceptions import ValidationError

    skill = Skill.objects.get(slug="bioma_cerrado")
    for name, value in change.items():
        setattr(skill, name, value)
    with pytest.raises(ValidationError) as exc:
        skill.full_clean()
    assert field in exc.value.message_dict


def test_a_skill_may_name_a_field_outside_the_schema_only_with_the_wildcard():
    skill = Skill.objects.get(slug="bioma_cerrado")
    assert skill.index_filters["agroecorregiao"] == "*"  # the seed's own example
    skill.full_clean()
    skill.index_filters = {**skill.index_filters, "agroecorregiao": ["*"], "cultura": ["soja"]}
    skill.full_clean()


def test_ingest_command_a_line_that_is_not_utf8_is_one_bad_line(tmp_path, sample_rows, capsys):
    good = _row(sample_rows, "sin_compactacao")
    # a U+2028 inside a JSON string is valid JSON and must not split the record
    other = {**_row(sample_rows, "pra_rotacao"), "fonte": "GAAS\u2028relato"}
    path = tmp_path / "chunks.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + json.dumps(good).encode()
        + b'\n{"chunk_id": "x", "texto": "\xff\xfe"}\n'
        + json.dumps(other, ensure_ascii=False).encode()
        + b"\n"
    )
    with pytest.raises(CommandError, match="1 line"):
        call_command("ingest_chunks", str(path), "--no-progress")
    out, err = capsys.readouterr()
    assert "line 2: not UTF-8" in err
    assert "ingested 2 created" in out
    assert Chunk.objects.get(chunk_id="pra_rotacao").metadata["fonte"] == "GAAS\u2028relato"


def test_the_16_classes_sit_in_the_seeds_four_groups():
    groups = {}
    for cls in OntologyClass.objects.all():
        groups.setdefault(cls.group, set()).add(cls.slug)
    assert groups == {
        "contexto_perfil": {"agroecossistema", "sistema_produtivo", "estagio_transicao", "perfil_produtor"},
        "processo_estrutura": {"sintoma", "processo", "estrutura"},
        "raciocinio_diagnostico": {
            "causa_provavel",
            "intervencao",
            "pratica",
            "indicador",
            "dosagem",
            "contraindicacao",
        },
        "conhecimento_evidencia": {"conceito", "caso", "evidencia"},
    }
    # skills come from the context/profile and process/structure groups only (the seed's mapping)
    skill_groups = set(Skill.objects.values_list("ontology_class__group", flat=True))
    assert skill_groups <= {"contexto_perfil", "processo_estrutura"}
