"""Differences between two revision snapshots, for the curator's compare page (pure).

Values are returned as plain text; the template escapes them, so a body holding
HTML or script shows as text, never as markup.
"""

import difflib
from dataclasses import dataclass

from knowledge.models import CONTENT_FIELDS

STATE_FIELDS = ("is_active", "is_overridden")
_LIST_FIELDS = {"aliases", "keywords", "semantic_ids"}


@dataclass(frozen=True)
class FieldChange:
    name: str
    old: str
    new: str

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add" | "del" | "hunk" | "context" | "header"
    text: str


@dataclass(frozen=True)
class RevisionDiff:
    fields: list[FieldChange]  # every metadata and state field, changed or not
    body: list[DiffLine]  # unified diff of the body; empty when the bodies are equal

    @property
    def changed_fields(self) -> list[str]:
        names = [f.name for f in self.fields if f.changed]
        return names + (["body"] if self.body else [])


def _as_text(name: str, value) -> str:
    if name in _LIST_FIELDS:
        return ", ".join(str(v) for v in (value or []))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def revision_diff(old: dict, new: dict, *, old_label: str = "old", new_label: str = "new") -> RevisionDiff:
    """Compare two snapshots (PackageRevision.data): metadata field by field, body line by line."""
    names = [f for f in CONTENT_FIELDS if f != "body"] + list(STATE_FIELDS)
    fields = [FieldChange(n, _as_text(n, old.get(n)), _as_text(n, new.get(n))) for n in names]
    lines: list[DiffLine] = []
    unified = difflib.unified_diff(
        (old.get("body") or "").splitlines(),
        (new.get("body") or "").splitlines(),
        fromfile=old_label,
        tofile=new_label,
        lineterm="",
    )
    for index, text in enumerate(unified):
        if index < 2:  # the ---/+++ file headers; a removed "-- x" line also starts with "---"
            kind = "header"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "add"
        elif text.startswith("-"):
            kind = "del"
        else:
            kind = "context"
        lines.append(DiffLine(kind, text))
    return RevisionDiff(fields=fields, body=lines)
