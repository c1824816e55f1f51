"""What the model is told about the screen: data minimization (PRD-002 §24–§25).

Only names travel: the page and tab titles, the target and its parents'
labels, the selected record's display name and — only when the question is
about it — the focused field's value. ``selection.fields``, ``page.metadata``,
route params, the user block and anything the redactor masked never do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .redaction import contains_mask
from .resolver import (
    TARGET_ELEMENT,
    ContextView,
    Resolution,
    SemanticInfo,
    parent_chain,
    record_name,
)


def _clean(text: Any) -> str | None:
    if not isinstance(text, str) or not text.strip() or contains_mask(text):
        return None
    return " ".join(text.split())[:200]


def build_prompt_context(
    context: Mapping[str, Any],
    resolution: Resolution,
    *,
    registry: Mapping[str, SemanticInfo] | None = None,
) -> str:
    """A compact, model-facing block describing where the user is (English labels)."""
    view = ContextView(context, registry)
    lines = ["UI context (what the user was looking at when asking):"]
    page_title = _clean(view.page.get("title"))
    if page_title:
        lines.append(f"- Page: {page_title}" + (f" [{view.page_id}]" if view.page_id else ""))
    if view.active_tab and _clean(view.active_tab.get("title")):
        lines.append(f"- Tab: {_clean(view.active_tab['title'])}")
    record = record_name(view.selection)
    if record and not contains_mask(record):
        lines.append(f"- Selected record: {_clean(record)} ({view.selection.get('entityType')})")

    target = resolution.target
    if target is not None and target.kind != "record":
        label = _clean(target.label) or target.semantic_id
        kind = target.type or target.kind
        sid = f" [{target.semantic_id}]" if target.semantic_id else ""
        lines.append(f'- Target: {kind} "{label}"{sid} (confidence: {target.confidence})')
        parents = target.parent_ids or (parent_chain(target.semantic_id, None, registry) if target.semantic_id else ())
        parent_labels = [p for p in (_clean(view.label_of(pid)) for pid in parents) if p]
        if parent_labels:
            lines.append(f"- Inside: {' > '.join(parent_labels)}")
        focus = context.get("focus") or {}
        if (
            resolution.asks_about_value
            and target.kind == TARGET_ELEMENT
            and focus.get("semanticId") == target.semantic_id
            and "value" in focus
            and focus["value"] is not None
            and not contains_mask(focus["value"])
        ):
            lines.append(f"- Current value of the target: {str(focus['value'])[:200]}")
    elif target is not None:
        lines.append(f"- Target: the selected record (confidence: {target.confidence})")

    if resolution.record_change is not None:
        lines.append(
            f"- Note: {resolution.record_change.notice} "
            "Earlier answers in this conversation may refer to the previous record."
        )
    if resolution.rewritten_message:
        lines.append(f"- Request with references resolved: {resolution.rewritten_message}")
    return "\n".join(lines)


def semantic_context(
    context: Mapping[str, Any],
    resolution: Resolution | None,
    *,
    registry: Mapping[str, SemanticInfo] | None = None,
) -> dict[str, Any]:
    """The router's context boost input: the focused id, its parent chain, the page id.

    The resolved target wins over the raw focus (a field named in the message is
    what the user asks about); an untargetable focus is not offered.
    """
    view = ContextView(context, registry)
    focus_id = None
    parents: tuple[str, ...] = ()
    target = resolution.target if resolution else None
    if target is not None and target.kind in (TARGET_ELEMENT, "tab") and target.semantic_id:
        focus_id, parents = target.semantic_id, target.parent_ids
    elif view.focus is not None and view.is_targetable(view.focus):
        focus_id, parents = view.focus.semantic_id, view.focus.parent_ids
    # Keys as knowledge.routing_service.SemanticContext.coerce reads them.
    return {"focus": focus_id, "parent_ids": list(parents), "page": view.page_id}
