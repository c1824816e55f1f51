"""The action chain: planner → policy → preview → confirm → execution → verification.

Every status change and its audit row are written in one short transaction;
the webhook call runs between two of them, never inside one. The caller's
role comes from the membership, never from the client's context.
"""

from actions.services.common import action_payload, membership_role
from actions.services.confirmation import action_confirm
from actions.services.planning import IntentRequest, TurnAction, action_id_for, turn_action_plan
from actions.services.running import action_execute, action_report, action_retry

__all__ = [
    "IntentRequest",
    "TurnAction",
    "action_confirm",
    "action_execute",
    "action_id_for",
    "action_payload",
    "action_report",
    "action_retry",
    "membership_role",
    "turn_action_plan",
]
