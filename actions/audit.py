"""The audit trail: one immutable row per step, hashes only.

Utterances, parameters and record ids are short and guessable, so a plain
SHA-256 would let anyone holding the table test guesses; they are hashed with
a key derived from SECRET_KEY (HMAC-SHA256). The context hash is the
snapshot's own content hash, so a row can be matched to its snapshot.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from django.conf import settings

from actions.models import Action, ActionAudit

_KEY_LABEL = b"contexto.actions.audit.v1"


def _key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode("utf-8"), _KEY_LABEL, hashlib.sha256).digest()


def keyed_hash(text: str) -> str:
    return hmac.new(_key(), text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def parameters_hash(parameters: dict) -> str:
    return keyed_hash(canonical(parameters))


def entity_hash(entity_type: str, entity_id: str) -> str:
    return keyed_hash(f"{entity_type}\x1f{entity_id}") if entity_id else ""


def audit_record(
    *, action: Action, step: str, actor=None, actor_role: str = "", reason: str = "", duration_ms: int = 0
) -> ActionAudit:
    """Write one step (inside the caller's transaction, with the status change it records)."""
    row = ActionAudit(
        tenant_id=action.tenant_id,
        action_id=action.pk,
        step=step,
        reason=reason[:64],
        actor=actor if getattr(actor, "is_authenticated", False) else None,
        actor_role=actor_role[:32],
        capability_id=action.capability.capability_id if action.capability_id else "",
        parameters_hash=parameters_hash(action.parameters),
        entity_hash=entity_hash(action.entity_type, action.entity_id),
        context_hash=action.context_sha256,
        utterance_hash=action.utterance_hash,
        duration_ms=max(0, min(int(duration_ms), 2**31 - 1)),
    )
    row.full_clean(exclude=["tenant", "actor"])
    row.save()
    return row
