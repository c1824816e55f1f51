"""Reads: the active registry, and one tenant's actions."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from actions.exceptions import ActionNotFoundError
from actions.models import Action, Capability


def capability_list() -> QuerySet[Capability]:
    return Capability.objects.filter(is_active=True).order_by("capability_id")


def action_get(*, tenant, action_id) -> Action:
    """One action of the caller's tenant; another tenant's is simply not found."""
    try:
        action_uuid = uuid.UUID(str(action_id))
    except ValueError:
        raise ActionNotFoundError() from None
    action = Action.objects.select_related("capability").filter(tenant=tenant, pk=action_uuid).first()
    if action is None:
        raise ActionNotFoundError()
    return action
