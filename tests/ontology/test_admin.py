"""Curators in the admin: bulk actions go through the services and respect the critical gate."""

import json

import pytest
from django.test import Client

from ontology.models import Chunk, ChunkState
from ontology.services import chunk_ingest

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/ontology/chunk/"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _action(client, action, chunk_ids):
    pks = [str(pk) for pk in Chunk.objects.filter(chunk_id__in=chunk_ids).values_list("pk", flat=True)]
    return client.post(CHANGELIST, {"action": action, "_selected_action": pks}, follow=True)


@pytest.fixture
def tagged(sample_rows):
    ids = ["int_reinoculacao", "dos_inoculante_soja", "sin_compactacao"]
    for row in sample_rows:
        if row["chunk_id"] in ids:
            chunk_ingest(acting_user=None, record=row, index=False)
    return ids


def test_curators_see_the_ontology_admin(curator):
    client = _client(curator)
    for url in (
        CHANGELIST,
        "/admin/ontology/skill/",
        "/admin/ontology/ontologyclass/",
        "/admin/ontology/profile/",
        "/admin/ontology/ontologyroute/",
        "/admin/ontology/metadataschema/",
    ):
        assert client.get(url).status_code == 200, url


def test_bulk_validate_without_the_permission_validates_only_non_critical_chunks(curator, tagged):
    response = _action(_client(curator), "validate", tagged)
    text = response.content.decode()
    assert "Validated 1 chunk(s)." in text
    assert "int_reinoculacao" in text and "validate_critical_chunk" in text
    states = dict(Chunk.objects.values_list("chunk_id", "state"))
    assert states == {"int_reinoculacao": "tagged", "dos_inoculante_soja": "tagged", "sin_compactacao": "validated"}


def test_bulk_validate_and_index_with_the_permission(validator, tagged):
    response = _action(_client(validator), "validate_and_index", tagged)
    assert "Validated and indexed 3 chunk(s)." in response.content.decode()
    assert set(Chunk.objects.values_list("state", flat=True)) == {ChunkState.INDEXED}
    assert set(Chunk.objects.values_list("validated_by__username", flat=True)) == {validator.username}


def test_bulk_accept_proposal_moves_classified_chunks_to_tagged(curator, sample_rows):
    row = next(r for r in sample_rows if r["chunk_id"] == "sin_compactacao")
    chunk = Chunk.objects.create(
        chunk_id="novo",
        text="x",
        state=ChunkState.CLASSIFIED,
        proposed_class="sintoma",
        proposed_subclass="solo",
        metadata={k: v for k, v in row.items() if k not in ("chunk_id", "texto")},
    )
    _action(_client(curator), "accept_proposal", ["novo"])
    chunk.refresh_from_db()
    assert chunk.state == ChunkState.TAGGED and chunk.ontology_class.slug == "sintoma"


def test_admin_edit_with_a_bad_metadata_field_shows_the_field_and_saves_nothing(curator, sample_rows):
    row = next(r for r in sample_rows if r["chunk_id"] == "sin_compactacao")
    chunk_ingest(acting_user=None, record=row)
    chunk = Chunk.objects.get(chunk_id="sin_compactacao")
    bad = {**chunk.metadata, "escala": "planeta"}

    response = _client(curator).post(
        f"{CHANGELIST}{chunk.pk}/change/",
        {
            "text": chunk.text,
            "metadata": json.dumps(bad),
            "events-TOTAL_FORMS": "0",
            "events-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "escala" in response.content.decode()
    chunk.refresh_from_db()
    assert chunk.metadata["escala"] == "talhao"


def _profile_post(tenant, skill, tier):
    from ontology.models import Skill

    return {
        "tenant": str(tenant.pk),
        "external_user_id": "prod-admin",
        "user": "",
        "tier": tier,
        "profile_skills-TOTAL_FORMS": "1",
        "profile_skills-INITIAL_FORMS": "0",
        "profile_skills-0-skill": str(Skill.objects.get(slug=skill).pk),
        "profile_skills-0-source": "manual",
    }


def test_admin_profile_skills_follow_the_tier_rule_of_the_api(curator, tenant):
    from ontology.models import Profile

    client = _client(curator)
    # sistema_consolidado needs tier "arvore": as in PUT /profile, a "semente" profile may not hold it
    response = client.post("/admin/ontology/profile/add/", _profile_post(tenant, "sistema_consolidado", "semente"))
    assert response.status_code == 200
    assert "sistema_consolidado need a higher tier than" in response.content.decode()
    assert not Profile.objects.filter(external_user_id="prod-admin").exists()

    response = client.post("/admin/ontology/profile/add/", _profile_post(tenant, "sistema_consolidado", "arvore"))
    assert response.status_code == 302, response.content.decode()[:2000]
    profile = Profile.objects.get(external_user_id="prod-admin")
    assert [s.slug for s in profile.skills.all()] == ["sistema_consolidado"]


def test_a_class_edited_in_the_admin_takes_effect_on_the_next_route(curator, sample_chunks):
    from ontology.models import OntologyClass
    from ontology.selectors import indexed_corpus

    cls = OntologyClass.objects.get(slug="pratica")
    practices = {r["chunk_id"] for r in sample_chunks if r["classe_ontologica"] == "pratica"}
    assert practices <= {r.chunk_id for r in indexed_corpus().records}
    response = _client(curator).post(
        f"/admin/ontology/ontologyclass/{cls.pk}/change/",
        {
            "slug": cls.slug,
            "group": cls.group,
            "label": cls.label,
            "description": cls.description,
            "subclasses": json.dumps(cls.subclasses),
            "critical": "on",
            "position": cls.position,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert OntologyClass.objects.get(pk=cls.pk).critical
    # its chunks were indexed without a validator holding the permission: out of the index now
    assert not practices & {r.chunk_id for r in indexed_corpus().records}
