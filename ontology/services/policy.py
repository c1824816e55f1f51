"""The learned strategy policy: feedback credits, freeze, reset, rollback, bounds.

Every change bumps the policy version and writes an immutable revision in the same
transaction, so a route's recorded ``policy_version`` always names a state that can be
inspected or restored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from django.db import transaction

from common.exceptions import ApplicationError
from ontology.models import OntologyRoute, Skill, StrategyPolicy, StrategyPolicyRevision
from ontology.routing.bandit import credit, lean, route_seed, thompson_weights
from ontology.routing.data import patterns_file, strategies
from ontology.routing.distribution import SkillSpec, strategy_distribution

logger = logging.getLogger(__name__)
RATINGS = ("up", "down")


def _snapshot(policy: StrategyPolicy, *, note: str, author=None) -> None:
    StrategyPolicyRevision.objects.create(
        policy=policy,
        version=policy.version,
        state=policy.state,
        frozen=policy.frozen,
        max_shift=policy.max_shift,
        prior_strength=policy.prior_strength,
        note=note[:200],
        author=author,
    )


def policy_get_or_create(*, tenant) -> StrategyPolicy:
    policy, created = StrategyPolicy.objects.get_or_create(tenant=tenant)
    if created:
        _snapshot(policy, note="initial: the deterministic matrix")
    return policy


def _locked(tenant) -> StrategyPolicy:
    policy_get_or_create(tenant=tenant)
    return StrategyPolicy.objects.select_for_update().get(tenant=tenant)


def _save_new_version(policy: StrategyPolicy, *, note: str, author=None) -> StrategyPolicy:
    policy.version += 1
    policy.full_clean()
    policy.save()
    _snapshot(policy, note=note, author=author)
    return policy


def route_policy(
    tenant, message: str
) -> tuple[StrategyPolicy | None, Callable[[str, Sequence[SkillSpec]], Mapping[str, float]]]:
    """The policy callable for one route: deterministic prior → Thompson sample within bounds,
    seeded by (tenant, version, pattern, message) so a route can be replayed."""
    policy = StrategyPolicy.objects.filter(tenant=tenant).first()

    def weigh(pattern: str, skills: Sequence[SkillSpec]) -> Mapping[str, float]:
        prior = strategy_distribution(pattern, skills)
        if policy is None:
            return prior
        return thompson_weights(
            prior,
            (policy.state or {}).get(pattern),
            canonical=patterns_file()["patterns"][pattern]["canonical"],
            order=strategies(),
            prior_strength=policy.prior_strength,
            max_shift=policy.max_shift,
            seed=route_seed(tenant.pk, policy.version, pattern, message),
        )

    return policy, weigh


def _route_lean(route: OntologyRoute, max_shift: float) -> dict[str, float]:
    """How far the rated route's weights leaned from its deterministic distribution (the
    pattern's matrix shifted by the skills it ran with, as they are now)."""
    if not route.distribution or route.pattern not in patterns_file()["patterns"]:
        return {}
    specs = [skill.to_spec() for skill in Skill.objects.filter(slug__in=route.skills or [])]
    return lean(route.distribution, strategy_distribution(route.pattern, specs), max_shift)


@transaction.atomic
def policy_feedback(*, tenant, route_id: int | None, rating: str, previous: str | None = None) -> int | None:
    """Credit a rating to the strategies that brought the rated reply's evidence (taking a
    previous rating by the same user back first). Returns the new version, or None when
    nothing moved (no route, no evidence, frozen, same rating)."""
    if rating not in RATINGS or (previous is not None and previous not in RATINGS):
        raise ApplicationError("rating must be 'up' or 'down'.", code="VALIDATION_ERROR", details={"field": "rating"})
    if route_id is None or rating == previous:
        return None
    route = OntologyRoute.objects.filter(pk=route_id, tenant=tenant).first()
    if route is None or not route.evidence_shares:
        return None
    policy = _locked(tenant)
    if policy.frozen:
        return None
    state = policy.state or {}
    leaned = _route_lean(route, policy.max_shift)
    if previous is not None:
        state = credit(state, route.pattern, route.evidence_shares, previous, sign=-1, leaned=leaned)
    policy.state = credit(state, route.pattern, route.evidence_shares, rating, leaned=leaned)
    _save_new_version(policy, note=f"feedback {rating} on route {route.pk}")
    logger.info("ontology.policy_feedback tenant=%s route=%s version=%s", tenant.pk, route.pk, policy.version)
    return policy.version


@transaction.atomic
def policy_freeze(*, tenant, frozen: bool, acting_user=None) -> StrategyPolicy:
    policy = _locked(tenant)
    if policy.frozen == frozen:
        return policy
    policy.frozen = frozen
    return _save_new_version(policy, note="frozen" if frozen else "unfrozen", author=acting_user)


@transaction.atomic
def policy_reset(*, tenant, acting_user=None) -> StrategyPolicy:
    """Back to the deterministic matrix (the feedback credited so far is dropped)."""
    policy = _locked(tenant)
    policy.state = {}
    return _save_new_version(policy, note="reset to the deterministic matrix", author=acting_user)


@transaction.atomic
def policy_rollback(*, tenant, version: int, acting_user=None) -> StrategyPolicy:
    """Restore the state and bounds of an earlier version (as a new version)."""
    policy = _locked(tenant)
    revision = policy.revisions.filter(version=version).first()
    if revision is None:
        raise ApplicationError(
            f"Policy version {version} does not exist.", code="POLICY_VERSION_NOT_FOUND", status_code=404
        )
    policy.state = revision.state
    policy.max_shift = revision.max_shift
    policy.prior_strength = revision.prior_strength
    return _save_new_version(policy, note=f"rollback to v{version}", author=acting_user)


@transaction.atomic
def policy_set_bounds(
    *, tenant, max_shift: float, prior_strength: float | None = None, acting_user=None
) -> StrategyPolicy:
    policy = _locked(tenant)
    policy.max_shift = float(max_shift)
    if prior_strength is not None:
        policy.prior_strength = float(prior_strength)
    return _save_new_version(policy, note=f"bounds ±{policy.max_shift}", author=acting_user)
