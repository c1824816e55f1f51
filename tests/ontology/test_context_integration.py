"""POST /api/v1/context carries the ontology route when asked (skills) or when the caller has a profile."""

import pytest

from ontology.models import OntologyRoute

from .conftest import SEED_MESSAGE, SEED_SKILLS

pytestmark = pytest.mark.django_db
URL = "/api/v1/context"


def test_context_with_skills_returns_the_ontology_route(api_client, sample_chunks):
    response = api_client.post(URL, {"message": SEED_MESSAGE, "skills": list(SEED_SKILLS)}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert {"full", "listed", "rules"} <= set(body)
    ontology = body["ontology"]
    assert ontology["pattern"] == "diagnosis"
    assert ontology["distribution"] == {
        "multi_hop_guiado": 0.6,
        "casos_semelhantes": 0.25,
        "hibrida": 0.1,
        "raptor": 0.05,
    }
    assert ontology["strategy"] == "multi_hop_guiado"
    assert ontology["filters"] == {
        "bioma": ["cerrado"],
        "cultura": ["soja"],
        "classe_ontologica": ["sintoma", "causa_provavel", "processo", "intervencao"],
    }
    assert ontology["steps"][0]["name"] == "sintoma"
    assert OntologyRoute.objects.get(pk=ontology["route_id"]).origin == "context"


def test_context_without_skills_or_profile_has_no_ontology(api_client, sample_chunks):
    body = api_client.post(URL, {"message": SEED_MESSAGE}, format="json").json()
    assert "ontology" not in body
    assert not OntologyRoute.objects.exists()


def test_context_uses_the_callers_profile_and_body_skills_override_it(api_client, sample_chunks):
    api_client.put("/api/v1/profile", {"skills": ["bioma_pampa"]}, format="json")
    from_profile = api_client.post(URL, {"message": SEED_MESSAGE}, format="json").json()["ontology"]
    assert from_profile["skills_source"] == "profile" and from_profile["filters"]["bioma"] == ["pampa"]
    override = api_client.post(URL, {"message": SEED_MESSAGE, "skills": ["bioma_cerrado"]}, format="json").json()
    assert override["ontology"]["skills_source"] == "request" and override["ontology"]["filters"]["bioma"] == [
        "cerrado"
    ]


def test_context_uses_an_end_users_profile(api_client, sample_chunks):
    api_client.put("/api/v1/profile", {"skills": list(SEED_SKILLS), "external_user_id": "prod-1"}, format="json")
    body = api_client.post(URL, {"message": SEED_MESSAGE, "external_user_id": "prod-1"}, format="json").json()
    assert body["ontology"]["distribution"]["multi_hop_guiado"] == 0.6


def test_context_with_an_unknown_skill_is_a_400(api_client):
    response = api_client.post(URL, {"message": SEED_MESSAGE, "skills": ["nao_existe"]}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "UNKNOWN_SKILL"
    assert not OntologyRoute.objects.exists()
