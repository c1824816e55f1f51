"""What reference resolution produces: targets, references, clarifications."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .vocabulary import Deictic

EXACT, HIGH, MEDIUM, LOW = "exact", "high", "medium", "low"
CONFIDENCE_ORDER = (EXACT, HIGH, MEDIUM, LOW)

RESOLVED = "resolved"
CLARIFICATION = "clarification"

TARGET_ELEMENT, TARGET_RECORD, TARGET_TAB, TARGET_PAGE = "element", "record", "tab", "page"

MAX_PARENT_DEPTH = 12


@dataclass(frozen=True)
class SemanticInfo:
    """What the semantic-ID registry knows about an id (label, declared parent)."""

    label: str | None = None
    parent: str | None = None
    type: str | None = None


@dataclass(frozen=True)
class Element:
    semantic_id: str
    type: str | None
    label: str | None
    parent_ids: tuple[str, ...]  # nearest first
    visibility: str = "visible"


@dataclass(frozen=True)
class Reference:
    kind: str  # focus | selection | page | tab | viewport_top | viewport_bottom | named | implicit
    phrase: str | None
    semantic_id: str | None
    confidence: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "phrase": self.phrase, "semanticId": self.semantic_id, "confidence": self.confidence}


@dataclass(frozen=True)
class Target:
    kind: str  # element | record | tab | page
    semantic_id: str | None
    type: str | None
    label: str | None
    parent_ids: tuple[str, ...]
    confidence: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "semanticId": self.semantic_id,
            "type": self.type,
            "label": self.label,
            "parentIds": list(self.parent_ids),
            "confidence": self.confidence,
        }


@dataclass(frozen=True)
class Option:
    semantic_id: str
    label: str


@dataclass(frozen=True)
class Clarification:
    reason: str
    question: str
    options: tuple[Option, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "question": self.question,
            "options": [{"semanticId": o.semantic_id, "label": o.label} for o in self.options],
        }


@dataclass(frozen=True)
class RecordChange:
    previous: dict[str, str]
    current: dict[str, str] | None
    notice: str

    def to_dict(self) -> dict[str, Any]:
        return {"previous": self.previous, "current": self.current, "notice": self.notice}


@dataclass(frozen=True)
class Resolution:
    status: str
    language: str
    action: str  # explain | update | refer
    references: tuple[Reference, ...]
    target: Target | None
    clarification: Clarification | None
    rewritten_message: str
    intent: dict[str, Any] | None
    asks_about_value: bool
    record_change: RecordChange | None
    notes: tuple[str, ...] = field(default=())

    @property
    def needs_clarification(self) -> bool:
        return self.status == CLARIFICATION

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "language": self.language,
            "references": [r.to_dict() for r in self.references],
            "target": self.target.to_dict() if self.target else None,
            "clarification": self.clarification.to_dict() if self.clarification else None,
            "rewrittenMessage": self.rewritten_message,
            "intent": self.intent,
            "recordChange": self.record_change.to_dict() if self.record_change else None,
        }


@dataclass
class PhraseMatch:
    """Where a reference (a deictic phrase or an element label) was found in the folded message."""

    start: int
    end: int
    phrase: str
    deictic: Deictic | None = None
    element: Element | None = None
    # A determiner before a noun ("deste equipamento"): the noun stays, the
    # description is added after it instead of replacing the words.
    noun_end: int | None = None
