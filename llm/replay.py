"""Scripted replies from a JSON fixture (tests, demos, the seed's TC-99 replay).

Fixture shape::

    {
      "name": "TC-99-context-enrichment",
      "description": "free text",
      "loop": false,
      "turns": [
        {"user": "what the user says (documentation only)",
         "replies": [{"s": 99, "context_needed": "SAMPLE_INSTRUCTIONS"},
                     {"s": 0, "message": "..."}]}
      ]
    }

``"replies": [...]`` at the top level is accepted too. A reply that is a
string is returned verbatim (plain text, fenced JSON, garbage); an object is
serialized as JSON; ``{"provider_unavailable": "timeout"}`` simulates an
outage. Replies are consumed in order across calls; when the script runs out
the provider is unavailable (or starts again when ``loop`` is true).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterable

from .base import LLMConfigError, LLMRequest, LLMResult, ProviderUnavailable


def _normalise(reply: Any) -> Any:
    if isinstance(reply, str):
        return reply
    if isinstance(reply, dict):
        if set(reply) == {"provider_unavailable"}:
            return reply
        return json.dumps(reply, ensure_ascii=False)
    raise LLMConfigError(f"replay replies must be strings or objects, got {type(reply).__name__}")


class ReplayProvider:
    name = "replay"

    def __init__(self, replies: Iterable[Any], *, loop: bool = False, script_name: str = "replay"):
        self.replies = [_normalise(r) for r in replies]
        self.loop = loop
        self.script_name = script_name
        self._cursor = 0
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    @classmethod
    def from_fixture(cls, path: str | Path) -> "ReplayProvider":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LLMConfigError(f"cannot read replay fixture {path}: {exc.__class__.__name__}") from None
        return cls.from_data(data, default_name=Path(path).stem)

    @classmethod
    def from_data(cls, data: Any, *, default_name: str = "replay") -> "ReplayProvider":
        if isinstance(data, list):
            return cls(data, script_name=default_name)
        if not isinstance(data, dict):
            raise LLMConfigError("replay fixture must be an object or a list of replies")
        replies: list[Any] = []
        if "replies" in data:
            replies.extend(data["replies"])
        for turn in data.get("turns", []):
            replies.extend(turn.get("replies", []))
        if not replies:
            raise LLMConfigError("replay fixture has no replies")
        return cls(replies, loop=bool(data.get("loop", False)), script_name=str(data.get("name") or default_name))

    @property
    def remaining(self) -> int:
        return len(self.replies) - self._cursor

    def complete(self, request: LLMRequest) -> LLMResult:
        with self._lock:
            self.requests.append(request)
            if self._cursor >= len(self.replies):
                if not self.loop or not self.replies:
                    raise ProviderUnavailable("replay_exhausted")
                self._cursor = 0
            reply = self.replies[self._cursor]
            self._cursor += 1
        if isinstance(reply, dict):
            raise ProviderUnavailable(str(reply["provider_unavailable"]) or "replay_unavailable")
        return LLMResult(text=reply, model=f"replay:{self.script_name}")
