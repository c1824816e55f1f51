"""Profiles: the active skills of an end user (or of the API user itself) in a tenant."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import transaction

from ontology.exceptions import SkillTierError
from ontology.models import TIER_ORDER, Profile, ProfileSkill
from ontology.selectors import skills_by_slug

logger = logging.getLogger(__name__)


def _profile_lock(*, tenant, user, external_user_id: str) -> Profile:
    lookup = {"tenant": tenant, "external_user_id": external_user_id}
    if not external_user_id:
        lookup["user"] = user
    profile, _ = Profile.objects.get_or_create(**lookup, defaults={"user": user})
    return Profile.objects.select_for_update().get(pk=profile.pk)


@transaction.atomic
def profile_set_skills(
    *, acting_user, tenant, skills: Sequence[str], external_user_id: str = "", tier: str | None = None
) -> Profile:
    """Replace the profile's skills (PUT semantics). Unknown skills and skills above the
    profile's tier are 400s and change nothing."""
    resolved = skills_by_slug(skills)
    profile = _profile_lock(tenant=tenant, user=acting_user, external_user_id=external_user_id)
    if tier is not None:
        profile.tier = tier
    too_high = [s.slug for s in resolved if TIER_ORDER.index(s.min_tier) > TIER_ORDER.index(profile.tier)]
    if too_high:
        raise SkillTierError(
            f"Skill(s) {', '.join(too_high)} need a higher tier than '{profile.tier}'.",
            details={"skills": too_high, "tier": profile.tier},
        )
    profile.full_clean()
    profile.save()
    keep = {s.pk for s in resolved}
    profile.profile_skills.exclude(skill_id__in=keep).delete()
    existing = set(profile.profile_skills.values_list("skill_id", flat=True))
    ProfileSkill.objects.bulk_create(
        [
            ProfileSkill(profile=profile, skill=s, source=ProfileSkill.Source.MANUAL)
            for s in resolved
            if s.pk not in existing
        ]
    )
    logger.info("ontology.profile_set profile=%s skills=%d", profile.pk, len(resolved))
    return profile


@transaction.atomic
def profile_apply_situational(*, profile: Profile, activated: Sequence[str], deactivated: Sequence[str]) -> None:
    """Persist situational skills switched on/off by a routed message (durable diagnoses)."""
    if activated:
        for skill in skills_by_slug(activated):
            ProfileSkill.objects.get_or_create(
                profile=profile, skill=skill, defaults={"source": ProfileSkill.Source.SITUATIONAL}
            )
    if deactivated:
        ProfileSkill.objects.filter(profile=profile, skill__slug__in=list(deactivated)).delete()
