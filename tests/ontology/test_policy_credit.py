"""Credit assignment of the learned strategy policy: a rating also credits how far the
route's sampled weights leaned from the deterministic ones, so the policy tells the arms
apart in tens of ratings instead of hundreds."""

import pytest

from ontology.models import OntologyRoute, StrategyPolicy
from ontology.routing.bandit import credit, lean, posterior_means, thompson_weights
from ontology.services.policy import policy_feedback

ORDER = ("multi_hop_guiado", "graphrag", "casos_semelhantes", "hibrida", "raptor")
CONCEPT = {"raptor": 0.5, "hibrida": 0.3, "graphrag": 0.2}  # patterns.yaml, no skills


def _simulate(prior, *, steps, max_shift, prefer="raptor", with_lean=True):
    """The scripted user of test_feedback_policy_and_e2e: up when the policy leaned towards
    `prefer`, down otherwise; evidence shares follow the weights."""
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
        rating = "up" if weights[prefer] > prior[prefer] else "down"
        leaned = lean(weights, prior, max_shift) if with_lean else None
        state = credit(state, "concept", dict(weights), rating, leaned=leaned)
    return posterior_means(prior, state["concept"], prior_strength=20, max_shift=max_shift), history


def test_crediting_the_lean_learns_a_preference_several_times_faster_within_bounds():
    shares_only, _ = _simulate(CONCEPT, steps=50, max_shift=0.2, with_lean=False)
    with_lean, history = _simulate(CONCEPT, steps=50, max_shift=0.2)
    # measured: raptor 0.527 by shares alone, 0.649 with the lean, after 50 ratings
    assert shares_only["raptor"] < CONCEPT["raptor"] + 0.05
    assert with_lean["raptor"] > CONCEPT["raptor"] + 0.1
    assert with_lean["hibrida"] < CONCEPT["hibrida"] and with_lean["graphrag"] < CONCEPT["graphrag"]
    assert all(abs(w[s] - CONCEPT[s]) <= 0.2 + 1e-3 for w in history for s in CONCEPT)
    other, _ = _simulate(CONCEPT, steps=50, max_shift=0.2, prefer="hibrida")
    assert other["hibrida"] > CONCEPT["hibrida"] + 0.05 and other["raptor"] < CONCEPT["raptor"]


def test_the_lean_is_measured_in_units_of_the_bound_and_zero_without_learning():
    assert lean(CONCEPT, CONCEPT, 0.15) == {"graphrag": 0.0, "hibrida": 0.0, "raptor": 0.0}
    assert lean({"raptor": 0.6, "hibrida": 0.25, "graphrag": 0.15}, CONCEPT, 0.2) == pytest.approx(
        {"raptor": 0.5, "hibrida": -0.25, "graphrag": -0.25}
    )
    assert lean({"raptor": 0.9, "hibrida": 0.1}, CONCEPT, 0.1)["raptor"] == 1.0  # clipped
    assert lean({"raptor": 0.6}, CONCEPT, 0.0) == {}


def test_a_rating_taken_back_removes_exactly_its_lean_credit():
    leaned = {"raptor": 0.5, "hibrida": -0.25, "graphrag": -0.25}
    shares = {"raptor": 0.6, "hibrida": 0.25, "graphrag": 0.15}
    once = credit({}, "concept", shares, "up", leaned=leaned)
    assert once["concept"]["raptor"] == [1.1, 0.0]
    assert once["concept"]["hibrida"] == [0.25, 0.25]
    back = credit(once, "concept", shares, "up", sign=-1, leaned=leaned)
    assert all(v == [0.0, 0.0] for v in back["concept"].values())


@pytest.mark.django_db
def test_feedback_on_a_route_that_leaned_credits_the_lean(tenant):
    StrategyPolicy.objects.create(tenant=tenant, max_shift=0.2)
    route = OntologyRoute.objects.create(
        tenant=tenant,
        pattern="concept",
        confidence=0.9,
        distribution={"raptor": 0.6, "hibrida": 0.25, "graphrag": 0.15},
        evidence_shares={"raptor": 0.6, "hibrida": 0.25, "graphrag": 0.15},
        strategy="raptor",
        filters={},
        skills=[],
    )
    policy_feedback(tenant=tenant, route_id=route.pk, rating="up")
    arms = StrategyPolicy.objects.get(tenant=tenant).state["concept"]
    assert arms["raptor"] == [pytest.approx(1.1), 0.0]  # share 0.6 + lean 0.5
    assert arms["hibrida"] == [pytest.approx(0.25), pytest.approx(0.25)]  # leaned away: a failure too
    policy_feedback(tenant=tenant, route_id=route.pk, rating="down", previous="up")
    arms = StrategyPolicy.objects.get(tenant=tenant).state["concept"]
    assert arms["raptor"] == [0.0, pytest.approx(1.1)]  # the route leaned towards raptor and was disliked
    assert arms["hibrida"] == [pytest.approx(0.25), pytest.approx(0.25)]
