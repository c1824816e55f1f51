"""ontology_route (service + record) and the API: /profile, /ontology/skills, /ontology/route."""

import pytest

from ontology.models import OntologyRoute, Profile, ProfileSkill
from ontology.services import ontology_route, profile_set_skills

from .conftest import SEED_MESSAGE, SEED_SKILLS

pytestmark = pytest.mark.django_db

SEED_DISTRIBUTION = {"multi_hop_guiado": 0.60, "casos_semelhantes": 0.25, "hibrida": 0.10, "raptor": 0.05}
SEED_FILTERS = {
    "bioma": ["cerrado"],
    "cultura": ["soja"],
    "classe_ontologica": ["sintoma", "causa_provavel", "processo", "intervencao"],
}


def test_ontology_route_returns_the_seed_example_and_records_the_decision(tenant, sample_chunks):
    result = ontology_route(tenant=tenant, message=SEED_MESSAGE, skills=list(SEED_SKILLS))
    data = result.as_dict()
    assert {"pattern", "confidence", "distribution", "strategy", "filters", "steps"} <= set(data)
    assert data["pattern"] == "diagnosis"
    assert data["distribution"] == SEED_DISTRIBUTION
    assert data["strategy"] == "multi_hop_guiado"
    assert data["filters"] == SEED_FILTERS
    assert [s["name"] for s in data["steps"]][:7] == [
        "sintoma",
        "causa_provavel",
        "processo",
        "estrutura",
        "intervencao",
        "pratica",
        "indicador",
    ]
    row = OntologyRoute.objects.get(pk=data["route_id"])
    assert (row.tenant, row.pattern, row.strategy) == (tenant, "diagnosis", "multi_hop_guiado")
    assert row.distribution == SEED_DISTRIBUTION and row.filters == SEED_FILTERS
    assert "sin_baixa_nodulacao" in row.chunk_ids


def test_an_unvalidated_critical_chunk_is_never_in_a_route(tenant, sample_rows, validator):
    from ontology.services import chunk_ingest

    for row in sample_rows:
        chunk_ingest(acting_user=None, record=row)  # no validator: critical chunks stay tagged
    critical = {
        r["chunk_id"] for r in sample_rows if r["classe_ontologica"] in ("intervencao", "dosagem", "contraindicacao")
    }
    for message in (
        SEED_MESSAGE,
        "como melhorar a nodulação da soja?",
        "quanto calcário devo aplicar?",
        "qual a diferença entre escarificação e descompactação biológica?",
    ):
        result = ontology_route(tenant=tenant, message=message, skills=list(SEED_SKILLS))
        assert not critical & set(result.outcome.chunk_ids), message


def test_the_profile_is_the_prior_and_situational_skills_persist_on_it(tenant, user, sample_chunks):
    profile = profile_set_skills(acting_user=user, tenant=tenant, skills=list(SEED_SKILLS))
    result = ontology_route(tenant=tenant, message=SEED_MESSAGE, profile=profile)
    assert result.skills_source == "profile"
    assert result.as_dict()["distribution"] == SEED_DISTRIBUTION
    ontology_route(tenant=tenant, message="meu solo está compactado", profile=profile)
    situational = ProfileSkill.objects.get(profile=profile, skill__slug="compactacao_persistente")
    assert situational.source == ProfileSkill.Source.SITUATIONAL
    ontology_route(tenant=tenant, message="a compactação resolvida; e agora?", profile=profile)
    assert not ProfileSkill.objects.filter(profile=profile, skill__slug="compactacao_persistente").exists()


def test_explicit_skills_override_the_profile_for_that_call_only(tenant, user, sample_chunks):
    profile = profile_set_skills(acting_user=user, tenant=tenant, skills=["bioma_pampa"])
    result = ontology_route(tenant=tenant, message=SEED_MESSAGE, skills=list(SEED_SKILLS), profile=profile)
    assert result.skills_source == "request" and result.as_dict()["filters"]["bioma"] == ["cerrado"]
    assert [ps.skill.slug for ps in profile.profile_skills.all()] == ["bioma_pampa"]


# --- API -------------------------------------------------------------------------


def test_route_api_returns_the_seed_example(api_client, sample_chunks):
    response = api_client.post(
        "/api/v1/ontology/route", {"message": SEED_MESSAGE, "skills": list(SEED_SKILLS)}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["pattern"] == "diagnosis"
    assert body["distribution"] == SEED_DISTRIBUTION and body["filters"] == SEED_FILTERS
    assert body["strategy"] == "multi_hop_guiado"
    assert body["steps"][0]["chunks"][0]["chunk_id"] == "sin_baixa_nodulacao"
    assert "## 1. Sintoma" in body["context"]


def test_route_api_uses_the_callers_profile(api_client, sample_chunks, django_assert_num_queries):
    assert api_client.put("/api/v1/profile", {"skills": list(SEED_SKILLS)}, format="json").status_code == 200
    api_client.post("/api/v1/ontology/route", {"message": "aquece o corpus"}, format="json")
    # auth (1: token, user, membership and tenant in one join), profile, its skills, skill catalog, strategy
    # policy, corpus version check, latest summary tree, the route record
    with django_assert_num_queries(8):
        body = api_client.post("/api/v1/ontology/route", {"message": SEED_MESSAGE}, format="json").json()
    assert body["skills_source"] == "profile" and body["distribution"] == SEED_DISTRIBUTION


@pytest.mark.parametrize(
    "payload, code",
    [
        ({}, "VALIDATION_ERROR"),
        ({"message": ""}, "VALIDATION_ERROR"),
        ({"message": "x" * 4001}, "VALIDATION_ERROR"),
        ({"message": "oi", "skills": "bioma_cerrado"}, "VALIDATION_ERROR"),
        ({"message": "oi", "skill": ["bioma_cerrado"]}, "VALIDATION_ERROR"),
        ({"message": "oi", "skills": ["bioma_marte"]}, "UNKNOWN_SKILL"),
    ],
)
def test_route_api_rejects_bad_input_with_a_400_and_records_nothing(api_client, payload, code):
    response = api_client.post("/api/v1/ontology/route", payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert not OntologyRoute.objects.exists()


def test_ontology_endpoints_need_authentication(anon_client):
    assert anon_client.post("/api/v1/ontology/route", {"message": "oi"}, format="json").status_code == 401
    assert anon_client.get("/api/v1/profile").status_code == 401
    assert anon_client.put("/api/v1/profile", {"skills": []}, format="json").status_code == 401


def test_profile_get_and_put_for_the_caller(api_client):
    assert api_client.get("/api/v1/profile").json() == {
        "external_user_id": "",
        "tier": "semente",
        "skills": [],
        "situational_skills": [],
    }
    response = api_client.put("/api/v1/profile", {"skills": ["bioma_cerrado", "produtor_rural"]}, format="json")
    assert response.status_code == 200
    assert response.json()["skills"] == ["bioma_cerrado", "produtor_rural"]
    response = api_client.put("/api/v1/profile", {"skills": ["graos_soja_milho"]}, format="json")
    assert api_client.get("/api/v1/profile").json()["skills"] == ["graos_soja_milho"]


def test_profiles_of_end_users_are_per_tenant(api_client, other_api_client, tenant, other_tenant):
    api_client.put("/api/v1/profile", {"skills": ["bioma_cerrado"], "external_user_id": "prod-42"}, format="json")
    other_api_client.put("/api/v1/profile", {"skills": ["bioma_pampa"], "external_user_id": "prod-42"}, format="json")
    mine = api_client.get("/api/v1/profile", {"external_user_id": "prod-42"}).json()
    theirs = other_api_client.get("/api/v1/profile", {"external_user_id": "prod-42"}).json()
    assert mine["skills"] == ["bioma_cerrado"] and theirs["skills"] == ["bioma_pampa"]
    assert Profile.objects.get(tenant=tenant, external_user_id="prod-42").skills.count() == 1
    assert other_api_client.get("/api/v1/profile", {"external_user_id": "prod-7"}).json()["skills"] == []


@pytest.mark.parametrize(
    "payload, code, field",
    [
        ({"skills": ["bioma_cerrado", "nao_existe"]}, "UNKNOWN_SKILL", None),
        ({"skills": ["sistema_consolidado"]}, "SKILL_TIER_NOT_ALLOWED", None),
        ({"skills": "bioma_cerrado"}, "VALIDATION_ERROR", "skills"),
        ({"skills": [], "tier": "sequoia"}, "VALIDATION_ERROR", "tier"),
        ({"skills": [], "color": "x"}, "VALIDATION_ERROR", "color"),
    ],
)
def test_profile_put_rejects_bad_input_and_changes_nothing(api_client, payload, code, field):
    api_client.put("/api/v1/profile", {"skills": ["produtor_rural"]}, format="json")
    response = api_client.put("/api/v1/profile", payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    if field:
        assert field in error["details"]["fields"]
    assert api_client.get("/api/v1/profile").json()["skills"] == ["produtor_rural"]


def test_a_higher_tier_profile_may_activate_a_higher_tier_skill(api_client):
    response = api_client.put("/api/v1/profile", {"skills": ["sistema_consolidado"], "tier": "arvore"}, format="json")
    assert response.status_code == 200 and response.json()["tier"] == "arvore"


def test_skill_list_api(api_client):
    body = api_client.get("/api/v1/ontology/skills").json()
    ids = [s["id"] for s in body["results"]]
    assert {"bioma_cerrado", "graos_soja_milho", "transicao_em_curso", "produtor_rural", "erosao_avancada"} <= set(ids)
    cerrado = next(s for s in body["results"] if s["id"] == "bioma_cerrado")
    assert cerrado["ontology_class"] == "agroecossistema" and cerrado["rag_bias"]["graphrag"] == 0.45


def test_skill_list_api_carries_every_field_of_the_seeds_skill(api_client):
    body = api_client.get("/api/v1/ontology/skills", {"page_size": 100}).json()
    skills = {s["id"]: s for s in body["results"]}
    assert skills["bioma_cerrado"] == {
        "id": "bioma_cerrado",
        "category": "contexto_territorial",
        "ontology_class": "agroecossistema",
        "rag_bias": {"graphrag": 0.45, "casos_semelhantes": 0.30, "hibrida": 0.15, "raptor": 0.10},
        "index_filters": {"bioma": "cerrado", "agroecorregiao": "*"},
        "min_tier": "semente",
        "inference_agent": "diagnostico_territorial",
        "version": "2026.05.01",
        "critical": False,
        "situational": False,
        "activation": {},
        "deactivation": {},
    }
    situational = skills["compactacao_persistente"]
    assert situational["situational"] and situational["activation"]["sintomas"]
    assert situational["deactivation"]
