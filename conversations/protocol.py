"""The agent reply contract (DESIGN.md), parsed without side effects.

| reply                                   | kind      |
|-----------------------------------------|-----------|
| ``{"s": 0, "message": "..."}``          | answer    |
| ``{"s": 99, "context_needed": "ID"}``   | fetch     |
| ``{"s": 90, "reason": "..."}``          | handoff   |
| plain text                              | answer    |
| JSON-looking but unusable               | invalid   |

Markdown fences (```json ... ```) around the object are tolerated. A fetch
keeps ``context_needed`` exactly as sent: deciding that a missing, empty or
non-string value means "hand off for uncertainty" is the orchestrator's job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from common.identifiers import PROCEDURE_PREFIX

ReplyKind = Literal["answer", "fetch", "handoff", "invalid"]

STATUS_ANSWER = 0
STATUS_HANDOFF = 90
STATUS_FETCH = 99

_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class AgentReply:
    kind: ReplyKind
    message: str = ""
    context_needed: Any = None  # raw value for fetches; see ``fetch_target``
    has_context_needed: bool = False
    reason: str = ""
    error: str = ""  # machine code for invalid replies, safe to log

    @property
    def fetch_target(self) -> str | None:
        """The requested package as a non-empty string, or None if unusable."""

        if self.kind != "fetch" or not isinstance(self.context_needed, str):
            return None
        target = self.context_needed.strip()
        return target or None

    @property
    def fetch_problem(self) -> str:
        """Why a fetch is unusable: ``missing``, ``not_string``, ``empty`` or ``""``."""

        if self.kind != "fetch":
            return ""
        if not self.has_context_needed:
            return "missing"
        if not isinstance(self.context_needed, str):
            return "not_string"
        if not self.context_needed.strip().removeprefix(PROCEDURE_PREFIX).strip():
            return "empty"
        return ""


def _strip_fences(text: str) -> tuple[str, bool]:
    """Return the fenced payload when the reply is (or contains) a JSON fence."""

    stripped = text.strip()
    match = _FENCE_RE.fullmatch(stripped)
    if match:
        return match.group(2).strip(), match.group(1).lower() in ("json", "")
    for match in _FENCE_RE.finditer(stripped):
        payload = match.group(2).strip()
        if match.group(1).lower() == "json" or payload.startswith("{"):
            return payload, True
    return stripped, False


def _as_status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def parse_agent_reply(text: str | None) -> AgentReply:
    if text is None or not text.strip():
        return AgentReply(kind="invalid", error="empty_reply")
    payload, fenced = _strip_fences(text)
    looks_like_json = payload.startswith("{") or payload.startswith("[") or fenced
    if not looks_like_json:
        return AgentReply(kind="answer", message=text.strip())
    try:
        data = json.loads(payload)
    except ValueError:
        if fenced and not payload.startswith(("{", "[")):
            # a fenced non-JSON block (e.g. a code sample) is part of a plain answer
            return AgentReply(kind="answer", message=text.strip())
        return AgentReply(kind="invalid", error="unparseable_json")
    if not isinstance(data, dict):
        if isinstance(data, str) and data.strip():
            return AgentReply(kind="answer", message=data.strip())
        return AgentReply(kind="invalid", error="not_an_object")

    status = _as_status(data["s"]) if "s" in data else None
    if status is None:
        return AgentReply(kind="invalid", error="missing_status" if "s" not in data else "bad_status")
    if status == STATUS_ANSWER:
        message = data.get("message")
        if not isinstance(message, str) or not message.strip():
            return AgentReply(kind="invalid", error="missing_message")
        return AgentReply(kind="answer", message=message.strip())
    if status == STATUS_FETCH:
        has_value = "context_needed" in data
        return AgentReply(kind="fetch", context_needed=data.get("context_needed"), has_context_needed=has_value)
    if status == STATUS_HANDOFF:
        reason = data.get("reason")
        return AgentReply(kind="handoff", reason=reason.strip() if isinstance(reason, str) else "")
    return AgentReply(kind="invalid", error="unknown_status")
