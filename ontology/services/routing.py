"""ontology_route: the public entry point other apps call (the /context endpoint, the
agent turn) to route a message through the ontology. Every call is recorded."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from common.exceptions import ApplicationError
from ontology.models import OntologyRoute, Profile
from ontology.routing.engine import RouteOutcome, route
from ontology.selectors import indexed_corpus, profile_get, profile_skills, skill_catalog, skills_by_slug
from ontology.services.policy import route_policy
from ontology.services.profiles import profile_apply_situational

logger = logging.getLogger(__name__)
MAX_MESSAGE_CHARS = 4000


@dataclass(frozen=True)
class OntologyRouteResult:
    outcome: RouteOutcome
    route_id: int | None
    skills_source: str  # request | profile | none

    def as_dict(self) -> dict:
        return {**self.outcome.as_dict(), "route_id": self.route_id, "skills_source": self.skills_source}

    @property
    def context(self) -> str:
        return self.outcome.render_context()


def evidence_shares(evidence: Sequence[dict]) -> dict[str, float]:
    """Share of the delivered chunks each strategy brought (what feedback credits)."""
    if not evidence:
        return {}
    counts: dict[str, int] = {}
    for item in evidence:
        counts[item["strategy"]] = counts.get(item["strategy"], 0) + 1
    return {s: round(n / len(evidence), 4) for s, n in counts.items()}


def ontology_route(
    *,
    tenant,
    message: str,
    skills: Sequence[str] | None = None,
    profile: Profile | None = None,
    origin: str = "api",
    record: bool = True,
) -> OntologyRouteResult:
    """Route `message`. `skills` (ids) override the profile's skills for this call only;
    otherwise the profile's active skills are the prior. Situational skills switched by
    the message are persisted on the profile (not when `skills` override it)."""
    if not isinstance(message, str) or not message.strip():
        raise ApplicationError(
            "A non-empty message is required.", code="MESSAGE_REQUIRED", details={"field": "message"}
        )
    if len(message) > MAX_MESSAGE_CHARS:
        raise ApplicationError(
            f"The message is longer than {MAX_MESSAGE_CHARS} characters.",
            code="MESSAGE_TOO_LONG",
            details={"field": "message"},
        )
    if profile is not None and profile.tenant_id != tenant.pk:
        raise ApplicationError("Profile of another tenant.", code="PROFILE_NOT_FOUND", status_code=404)
    started = time.perf_counter()
    if skills is not None:
        active, source = skills_by_slug(skills), "request"
    elif profile is not None:
        active, source = profile_skills(profile), "profile"
    else:
        active, source = [], "none"
    catalog = {slug: s.to_spec() for slug, s in skill_catalog().items()}
    policy, weigh = route_policy(tenant, message)
    outcome = route(
        message=message,
        skills=[s.to_spec() for s in active],
        corpus=indexed_corpus(),
        skill_catalog=catalog,
        policy=weigh,
    )
    outcome.policy["version"] = policy.version if policy is not None else None
    if profile is not None and source == "profile" and (outcome.activated_skills or outcome.deactivated_skills):
        profile_apply_situational(
            profile=profile, activated=outcome.activated_skills, deactivated=outcome.deactivated_skills
        )
    duration_ms = int((time.perf_counter() - started) * 1000)
    route_id = None
    if record:
        row = OntologyRoute.objects.create(
            tenant=tenant,
            profile=profile,
            origin=origin[:32],
            pattern=outcome.pattern,
            confidence=outcome.confidence,
            fallback=outcome.fallback,
            runner_up=outcome.runner_up,
            distribution=outcome.distribution,
            evidence_shares=evidence_shares(outcome.evidence),
            policy_version=policy.version if policy is not None else None,
            strategy=outcome.strategy,
            filters=outcome.filters,
            skills=outcome.skills,
            interruptions=[i["type"] for i in outcome.interruptions],
            chunk_ids=outcome.chunk_ids,
            duration_ms=duration_ms,
        )
        route_id = row.pk
    logger.info(
        "ontology.route tenant=%s route=%s pattern=%s strategy=%s chunks=%d interruptions=%d ms=%d",
        tenant.pk,
        route_id,
        outcome.pattern,
        outcome.strategy,
        len(outcome.chunk_ids),
        len(outcome.interruptions),
        duration_ms,
    )
    return OntologyRouteResult(outcome=outcome, route_id=route_id, skills_source=source)


def ontology_for_caller(
    *,
    tenant,
    user,
    message: str,
    skills: Sequence[str] | None = None,
    external_user_id: str = "",
    origin: str = "context",
) -> dict | None:
    """The `ontology` block for callers outside this app (POST /context, the agent turn).

    Explicit `skills` route with those skills (overriding the profile for this call);
    otherwise the end user's (`external_user_id`) or the caller's own profile is used when
    it has active skills. Returns None when neither applies: no ontology for this caller.
    """
    profile = profile_get(tenant=tenant, user=user, external_user_id=external_user_id)
    if skills is None and (profile is None or not profile_skills(profile)):
        return None
    return ontology_route(tenant=tenant, message=message, skills=skills, profile=profile, origin=origin).as_dict()
