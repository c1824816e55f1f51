"""The one interface every LLM provider implements.

Providers are plain Python (no Django imports) so they can be tested over a
real socket without a database. The orchestrator builds an ``LLMRequest``
and gets back an ``LLMResult`` or a ``ProviderUnavailable``; nothing else
escapes a provider.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal, Protocol

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class KnowledgeItem:
    """A package whose body was delivered to the model for this call."""

    package_id: str
    title: str
    body: str


@dataclass(frozen=True)
class CatalogItem:
    """A catalog line the model may ask for with s=99 (no body)."""

    package_id: str
    title: str
    summary: str = ""
    kind: str = "knowledge"
    aliases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class LLMRequest:
    """What a provider is asked.

    ``messages`` is all a remote model sees. ``knowledge`` and ``catalog``
    repeat, in structured form, what the system prompt already contains, so
    the embedded offline provider can work without parsing its own prompt.
    """

    messages: tuple[ChatMessage, ...]
    model: str = ""
    knowledge: tuple[KnowledgeItem, ...] = ()
    catalog: tuple[CatalogItem, ...] = ()
    options: dict = field(default_factory=dict)

    @property
    def user_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""


@dataclass(frozen=True)
class LLMResult:
    text: str
    model: str = ""
    duration_ms: int = 0
    attempts: int = 1
    usage: dict = field(default_factory=dict)


class ProviderUnavailable(Exception):
    """The provider could not produce a usable reply.

    ``reason`` is a short machine code (``timeout``, ``network``,
    ``http_503``, ``malformed_body``, ``empty_choices``, ...) safe to log:
    it never carries prompt or reply text.
    """

    def __init__(self, reason: str, *, attempts: int = 1, duration_ms: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.duration_ms = duration_ms


class LLMConfigError(ValueError):
    """Invalid LLM configuration; raised at startup, never mid-turn."""


class LLMProvider(Protocol):
    name: str

    def complete(self, request: LLMRequest) -> LLMResult: ...


def reply_json_object(text: str | None) -> dict:
    """The JSON object a model's reply holds, tolerating a code fence or prose around it; ValueError
    (``json.JSONDecodeError`` included) when there is none."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise ValueError("no JSON object")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("not an object")
    return data
