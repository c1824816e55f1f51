"""The seed's worked example end to end on a fresh database (agronomy agent + offline
provider), reply feedback (auth, tenant, idempotency), and the learned strategy policy
(Thompson sampling within bounds, freeze, reset, rollback, recorded on every route)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.services import api_token_create
from conversations.models import Agent, MessageFeedback, Session
from ontology.models import OntologyRoute, StrategyPolicy
from ontology.routing.bandit import credit, posterior_means, project_bounded, thompson_weights
from ontology.services.policy import (
    policy_feedback,
    policy_freeze,
    policy_get_or_create,
    policy_reset,
    policy_rollback,
    policy_set_bounds,
)
from tests.conftest import _token_client
from tests.conversations.helpers import send

from .conftest import CLOSE_TOP_TWO, SEED_MESSAGE, SEED_SKILLS

pytestmark = pytest.mark.django_db

SEED_DISTRIBUTION = {"multi_hop_guiado": 0.6, "casos_semelhantes": 0.25, "hibrida": 0.1, "raptor": 0.05}
ORDER = ("multi_hop_guiado", "graphrag", "casos_semelhantes", "hibrida", "raptor")


@pytest.fixture
def loaded(validator):
    """What a fresh install runs: the sample chunks, critical ones validated by a curator."""
    call_command("load_ontology", "--sample-chunks", "--validator", validator.username)


@pytest.fixture
def agronomy_session(api_client, loaded):
    assert api_client.put("/api/v1/profile", {"skills": list(SEED_SKILLS)}, format="json").status_code == 200
    response = api_client.post("/api/v1/sessions", {"agent": "agronomia"}, format="json")
    assert response.status_code == 201, response.json()
    return Session.objects.get(pk=response.json()["id"])


def _answer(api_client, session, text=SEED_MESSAGE) -> dict:
    response = send(api_client, session, text)
    assert response.status_code == 201, response.json()
    return response.json()


# --- the worked example, out of the box ------------------------------------------------------


def test_the_agronomy_agent_exists_on_a_fresh_database_with_the_ontology_on():
    agent = Agent.objects.get(slug="agronomia")
    assert agent.ontology and agent.is_active


def test_the_seeds_worked_example_end_to_end_through_the_api(api_client, agronomy_session, settings):
    assert settings.LLM_PROVIDER == "offline"
    data = _answer(api_client, agronomy_session)
    assert data["status"] == "answered"
    ontology = data["ontology"]
    assert ontology["pattern"] == "diagnosis" and not ontology["fallback"]
    assert ontology["distribution"] == SEED_DISTRIBUTION
    assert ontology["budget"] == {"multi_hop_guiado": 12, "casos_semelhantes": 5, "hibrida": 2, "raptor": 1}
    assert ontology["filters"]["bioma"] == ["cerrado"] and ontology["filters"]["cultura"] == ["soja"]
    chain = [s["name"] for s in ontology["steps"] if s["role"] == "template"]
    assert chain == ["sintoma", "causa_provavel", "processo", "estrutura", "intervencao", "pratica", "indicador"]
    reply = data["reply"]
    # the seed's answer shape: symptom → causes → processes → … → indicators, sources cited
    marks = ["[sin_baixa_nodulacao]", "[cau_inoculacao_ineficiente]", "[pro_fixacao_biologica]", "[ind_nodulos]"]
    positions = [reply.index(m) for m in marks]
    assert positions == sorted(positions)
    assert "Fontes:" in reply and "Embrapa_Soja_circular_nodulacao_2020" in reply
    assert "\n- " not in reply.split("Fontes:")[0]  # prose, not a list of steps


def test_an_uncertain_pattern_asks_one_question_instead_of_answering(api_client, agronomy_session):
    data = _answer(api_client, agronomy_session, CLOSE_TOP_TWO)
    assert data["status"] == "clarification"
    assert data["reply"].startswith("Para eu responder do jeito certo")
    assert data["ontology"]["fallback"] is True and data["ontology"]["runner_up"]


def test_a_critical_skill_does_not_hand_off_a_concept_question(api_client, agronomy_session):
    profile = {"skills": [*SEED_SKILLS, "erosao_avancada"]}
    assert api_client.put("/api/v1/profile", profile, format="json").status_code == 200
    concept = _answer(api_client, agronomy_session, "O que é agregação do solo?")
    assert concept["status"] == "answered"
    left = _answer(api_client, agronomy_session, "já controlamos a erosão, o que é agregação do solo?")
    assert "erosao_avancada" in left["ontology"]["deactivated_skills"]
    assert "erosao_avancada" not in api_client.get("/api/v1/profile").json()["skills"]


# --- feedback API ------------------------------------------------------------------------------


def _feedback_url(session, message_id):
    return f"/api/v1/sessions/{session.pk}/messages/{message_id}/feedback"


def test_feedback_is_idempotent_per_message_and_user_and_moves_the_policy_once(api_client, agronomy_session, tenant):
    data = _answer(api_client, agronomy_session)
    url = _feedback_url(agronomy_session, data["message_id"])
    first = api_client.post(url, {"rating": "up", "reason": "clara"}, format="json")
    assert first.status_code == 201, first.json()
    version = first.json()["policy_version"]
    assert version is not None
    again = api_client.post(url, {"rating": "up", "reason": "clara"}, format="json")
    assert again.status_code == 200 and again.json()["policy_version"] == version
    assert MessageFeedback.objects.count() == 1
    policy = StrategyPolicy.objects.get(tenant=tenant)
    assert policy.version == version
    ups = {s: c[0] for s, c in policy.state["diagnosis"].items()}
    assert abs(sum(ups.values()) - 1.0) < 1e-3  # one rating, shared by the strategies' evidence
    # changing one's mind takes the first credit back
    down = api_client.post(url, {"rating": "down"}, format="json")
    assert down.status_code == 200 and down.json()["rating"] == "down"
    policy.refresh_from_db()
    assert all(c[0] == 0 for c in policy.state["diagnosis"].values())
    assert abs(sum(c[1] for c in policy.state["diagnosis"].values()) - 1.0) < 1e-3
    assert MessageFeedback.objects.get().rating == "down"


def test_another_user_of_the_tenant_rates_separately(api_client, agronomy_session, tenant):
    data = _answer(api_client, agronomy_session)
    colleague = get_user_model().objects.create_user(username="carla", password="x")
    api_token_create(user=colleague, tenant=tenant)
    url = _feedback_url(agronomy_session, data["message_id"])
    assert api_client.post(url, {"rating": "up"}, format="json").status_code == 201
    assert _token_client(colleague).post(url, {"rating": "down"}, format="json").status_code == 201
    assert MessageFeedback.objects.count() == 2


def test_feedback_needs_authentication_and_stays_in_the_tenant(
    api_client, other_api_client, anon_client, agronomy_session
):
    data = _answer(api_client, agronomy_session)
    url = _feedback_url(agronomy_session, data["message_id"])
    assert anon_client.post(url, {"rating": "up"}, format="json").status_code == 401
    other = other_api_client.post(url, {"rating": "up"}, format="json")
    assert other.status_code == 404 and other.json()["error"]["code"] == "SESSION_NOT_FOUND"
    assert MessageFeedback.objects.count() == 0


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"rating": "meh"}, 400, "VALIDATION_ERROR"),
        ({}, 400, "VALIDATION_ERROR"),
        ({"rating": "up", "extra": 1}, 400, "VALIDATION_ERROR"),
        ({"rating": "up", "reason": "x" * 501}, 400, "VALIDATION_ERROR"),
    ],
)
def test_bad_feedback_is_a_clear_error_and_writes_nothing(api_client, agronomy_session, body, status, code):
    data = _answer(api_client, agronomy_session)
    response = api_client.post(_feedback_url(agronomy_session, data["message_id"]), body, format="json")
    assert response.status_code == status and response.json()["error"]["code"] == code
    assert MessageFeedback.objects.count() == 0


def test_only_replies_can_be_rated_and_unknown_messages_are_404(api_client, agronomy_session):
    data = _answer(api_client, agronomy_session)
    inbound = agronomy_session.messages.get(role="user")
    response = api_client.post(_feedback_url(agronomy_session, inbound.pk), {"rating": "up"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "MESSAGE_NOT_RATABLE"
    missing = api_client.post(
        _feedback_url(agronomy_session, data["message_id"] + 999), {"rating": "up"}, format="json"
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "MESSAGE_NOT_FOUND"


# --- the learned policy ------------------------------------------------------------------------


def test_without_feedback_the_policy_is_exactly_the_deterministic_matrix():
    assert (
        thompson_weights(
            SEED_DISTRIBUTION, {}, canonical="multi_hop_guiado", order=ORDER, prior_strength=20, max_shift=0.15, seed=1
        )
        == SEED_DISTRIBUTION
    )


def test_bounds_keep_every_weight_within_the_curators_shift():
    prior = {"a": 0.6, "b": 0.3, "c": 0.1}
    bounds = {s: (max(0, w - 0.1), w + 0.1) for s, w in prior.items()}
    out = project_bounded({"a": 0.0, "b": 0.0, "c": 1.0}, bounds)
    assert abs(sum(out.values()) - 1) < 1e-9
    assert all(bounds[s][0] - 1e-9 <= w <= bounds[s][1] + 1e-9 for s, w in out.items())
    assert out["c"] == pytest.approx(0.2)


def _simulate(prior, *, steps, max_shift, prefer="raptor"):
    """A scripted user who prefers `prefer`: rates up when the policy leaned towards it
    (its weight above the deterministic one), down otherwise. Evidence shares follow the
    weights, as the evidence budget does."""
    state, history = {}, []
    for step in range(steps):
        weights = thompson_weights(
            prior,
            state.get("concept"),
            canonical="raptor",
            order=ORDER,
            prior_strength=20,
            max_shift=max_shift,
            seed=step,
        )
        history.append(weights)
        state = credit(state, "concept", dict(weights), "up" if weights[prefer] > prior[prefer] else "down")
    return state, history


def test_a_scripted_user_who_prefers_one_strategy_moves_the_weights_towards_it_within_bounds():
    prior = {"raptor": 0.5, "hibrida": 0.3, "graphrag": 0.2}
    state, history = _simulate(prior, steps=200, max_shift=0.2)
    means = posterior_means(prior, state["concept"], prior_strength=20, max_shift=0.2)
    assert means["raptor"] > prior["raptor"] + 0.015
    assert means["hibrida"] < prior["hibrida"] and means["graphrag"] < prior["graphrag"]
    late = sum(w["raptor"] for w in history[-50:]) / 50
    early = sum(w["raptor"] for w in history[:20]) / 20
    assert late > early
    assert all(abs(w[s] - prior[s]) <= 0.2 + 1e-3 for w in history for s in prior)
    # the same user against a tight curator bound: the weights never leave it
    _, tight = _simulate(prior, steps=60, max_shift=0.02)
    assert all(abs(w[s] - prior[s]) <= 0.02 + 1e-3 for w in tight for s in prior)
    # a user who prefers another strategy moves the policy the other way
    other, _ = _simulate(prior, steps=200, max_shift=0.2, prefer="hibrida")
    assert posterior_means(prior, other["concept"], prior_strength=20, max_shift=0.2)["raptor"] < prior["raptor"]


def test_routes_record_the_policy_version_and_the_weights_they_used(api_client, agronomy_session, tenant):
    data = _answer(api_client, agronomy_session)
    assert data["ontology"]["policy"] == {"weights": SEED_DISTRIBUTION, "learned": False, "version": None}
    route = OntologyRoute.objects.get(pk=data["ontology"]["route_id"])
    assert route.policy_version is None and route.distribution == SEED_DISTRIBUTION
    assert abs(sum(route.evidence_shares.values()) - 1) < 1e-3
    # a tenant whose users liked the similar cases: the weights move, and the route says so
    for _ in range(30):
        policy_feedback(tenant=tenant, route_id=route.pk, rating="up")
    policy = StrategyPolicy.objects.get(tenant=tenant)
    moved = _answer(api_client, agronomy_session)["ontology"]
    assert moved["policy"]["version"] == policy.version and moved["policy"]["learned"] is True
    assert moved["distribution"] != SEED_DISTRIBUTION
    assert OntologyRoute.objects.get(pk=moved["route_id"]).policy_version == policy.version
    for strategy, weight in moved["distribution"].items():
        assert abs(weight - SEED_DISTRIBUTION[strategy]) <= policy.max_shift + 1e-3


def test_freeze_stops_learning_reset_and_rollback_restore(api_client, agronomy_session, tenant, curator):
    data = _answer(api_client, agronomy_session)
    route_id = data["ontology"]["route_id"]
    policy_get_or_create(tenant=tenant)
    v_learned = policy_feedback(tenant=tenant, route_id=route_id, rating="up")
    learned_state = StrategyPolicy.objects.get(tenant=tenant).state
    frozen = policy_freeze(tenant=tenant, frozen=True, acting_user=curator)
    assert policy_feedback(tenant=tenant, route_id=route_id, rating="down") is None
    assert StrategyPolicy.objects.get(tenant=tenant).state == learned_state
    policy_freeze(tenant=tenant, frozen=False, acting_user=curator)
    reset = policy_reset(tenant=tenant, acting_user=curator)
    assert reset.state == {} and reset.version > frozen.version
    assert _answer(api_client, agronomy_session)["ontology"]["distribution"] == SEED_DISTRIBUTION
    back = policy_rollback(tenant=tenant, version=v_learned, acting_user=curator)
    assert back.state == learned_state and back.version > reset.version
    assert back.revisions.count() == back.version
    narrow = policy_set_bounds(tenant=tenant, max_shift=0.0, acting_user=curator)
    assert _answer(api_client, agronomy_session)["ontology"]["distribution"] == SEED_DISTRIBUTION
    assert narrow.max_shift == 0.0


def test_the_admin_freezes_resets_and_rolls_back_the_policy(client, curator, tenant):
    policy = policy_get_or_create(tenant=tenant)
    client.force_login(curator)
    url = "/admin/ontology/strategypolicy/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"action": "freeze", "_selected_action": [policy.pk]})
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.frozen and policy.version == 2
    client.post(url, {"action": "reset", "_selected_action": [policy.pk]})
    policy.refresh_from_db()
    assert policy.version == 3 and policy.state == {}
    change = f"{url}{policy.pk}/change/"
    assert client.get(change).status_code == 200
    response = client.post(change, {"max_shift": "0.05", "prior_strength": "20", "rollback_to": "1"})
    assert response.status_code == 302, response.content[:500]
    policy.refresh_from_db()
    assert policy.max_shift == 0.05 and policy.version == 5
    assert [r.note for r in policy.revisions.order_by("version")][-2:] == ["rollback to v1", "bounds ±0.05"]


def test_ingest_builds_a_versioned_summary_tree_that_routes_walk(api_client, loaded):
    from ontology.models import SummaryTree
    from ontology.services.summary_tree import summary_tree_build

    tree = SummaryTree.objects.get()  # built by the ingest's Celery task (eager here)
    assert tree.version == 1 and tree.provider == "offline" and tree.nodes_count == tree.nodes.count() > 10
    assert summary_tree_build() == tree  # same indexed chunks: no new version
    assert summary_tree_build(force=True).version == 2
    body = api_client.post(
        "/api/v1/ontology/route",
        {"message": "O que é agricultura de processo?", "skills": ["bioma_cerrado"]},
        format="json",
    ).json()
    assert body["pattern"] == "concept"
    # concept's canonical strategy is raptor: its template steps walk the stored tree
    walked = [s for s in body["steps"] if "tree" in s]
    assert walked and all(s["tree"]["version"] == 2 for s in walked)
    assert walked[0]["tree"]["walk"][0]["parent"] == "conceitos"


def test_the_llm_writes_the_tree_summaries_and_a_failure_falls_back_to_extractive(loaded, settings, llm_server):
    from ontology.models import SummaryNode
    from ontology.services.summary_tree import summary_tree_build

    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_MODEL = "scripted-model"
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 0
    llm_server.reply("Resumo escrito pelo modelo.").reply("Outro resumo do modelo.")
    tree = summary_tree_build(force=True)
    assert tree.provider == "openai"
    nodes = list(SummaryNode.objects.filter(tree=tree))
    leaves = {n.text for n in nodes if n.level == 2}
    assert {"Resumo escrito pelo modelo.", "Outro resumo do modelo."} <= leaves
    assert all(n.text for n in nodes)  # the calls past the script failed: extractive summaries took their place
    # recursive: the top node above the first branches summarizes its children's summaries
    assert any(n.level == 1 and "Resumo escrito pelo modelo." in n.text for n in nodes)
    assert "Resumir" not in llm_server.requests[0].system_prompt and llm_server.requests[0].system_prompt.startswith(
        "Resuma"
    )
