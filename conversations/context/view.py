"""A read-only model of one context: labels, hierarchy, visibility, candidates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


from common.identifiers import semantic_id_parents

from .results import MAX_PARENT_DEPTH, Element, SemanticInfo


def parent_chain(
    semantic_id: str,
    declared: list[str] | tuple[str, ...] | None = None,
    registry: Mapping[str, SemanticInfo] | None = None,
) -> tuple[str, ...]:
    """Ancestors of ``semantic_id``, nearest first.

    Declared ``parentIds`` win (the seed sends them root first; the order is
    detected by the dotted prefix), then the registry's declared parents, then
    the dotted id.
    """
    if declared:
        ids = list(declared)
        if len(ids) > 1 and ids[-1].startswith(ids[0] + "."):
            ids.reverse()  # root first → nearest first
        return tuple(i for i in ids if i != semantic_id)
    chain: list[str] = []
    current = semantic_id
    seen = {semantic_id}
    for _ in range(MAX_PARENT_DEPTH):
        info = registry.get(current) if registry else None
        parent = info.parent if info and info.parent else None
        if parent is None:
            dotted = semantic_id_parents(current)
            parent = dotted[0] if dotted else None
        if parent is None or parent in seen:
            break
        chain.append(parent)
        seen.add(parent)
        current = parent
    return tuple(chain)


class ContextView:
    """Read-only lookups over one context: labels, visibility, candidates."""

    def __init__(self, context: Mapping[str, Any], registry: Mapping[str, SemanticInfo] | None = None):
        self.context = context
        self.registry = registry or {}
        self.page = context.get("page") or {}
        self.page_id = self.page.get("semanticId") or self.page.get("id")
        self.viewport = context.get("viewport") or {}
        self.selection = context.get("selection")
        self.labels: dict[str, str] = {}
        self.types: dict[str, str] = {}
        self.blocked: set[str] = set()
        self.elements: dict[str, Element] = {}

        if self.page_id:
            self.labels[self.page_id] = self.page.get("title")
            self.types[self.page_id] = "page"
        for crumb in (context.get("navigation") or {}).get("breadcrumbs") or ():
            if crumb.get("semanticId") and crumb.get("label"):
                self.labels.setdefault(crumb["semanticId"], crumb["label"])

        self.active_tab = None
        tabs = context.get("tabs") or []
        active_id = context.get("activeTabId")
        for tab in tabs:
            sid = self.tab_semantic_id(tab)
            self.labels[sid] = tab.get("title")
            self.types[sid] = "tab"
            is_active = tab.get("id") == active_id if active_id else bool(tab.get("active"))
            if is_active and tab.get("visibility", "visible") == "visible":
                self.active_tab = {**tab, "semanticId": sid}
            elif not is_active or tab.get("visibility", "visible") != "visible":
                self.blocked.add(sid)

        for raw in context.get("elements") or ():
            sid = raw["semanticId"]
            element = Element(
                semantic_id=sid,
                type=raw.get("type") or (self.registry.get(sid).type if sid in self.registry else None),
                label=raw.get("label"),
                parent_ids=parent_chain(sid, raw.get("parentIds"), self.registry),
                visibility=raw.get("visibility", "visible"),
            )
            self.elements[sid] = element
            if element.label:
                self.labels[sid] = element.label
            if element.type:
                self.types[sid] = element.type
            if element.visibility != "visible":
                self.blocked.add(sid)

        self.focus: Element | None = self._read_focus(context.get("focus"))

        self.visible_ids: list[str] | None = None
        if self.viewport.get("visibleSemanticIds") is not None:
            self.visible_ids = list(self.viewport["visibleSemanticIds"])

    def _read_focus(self, raw_focus: Mapping[str, Any] | None) -> Element | None:
        """The focus, as one entry with its listed copy if the elements name it too.

        A delta replaces the element list but merges the focus, so one id can arrive twice with
        different parents: declared parents win over a guessed chain, and the stricter visibility
        of the two wins, so the resolver and every later check agree.
        """
        if not raw_focus:
            return None
        sid = raw_focus["semanticId"]
        listed = self.elements.get(sid)
        declared = raw_focus.get("parentIds")
        visibility = raw_focus.get("visibility", "visible")
        if listed is not None and listed.visibility != "visible":
            visibility = listed.visibility
        focus = Element(
            semantic_id=sid,
            type=raw_focus.get("type") or (listed.type if listed else None),
            label=raw_focus.get("label") or self.label_of(sid),
            parent_ids=(
                listed.parent_ids if listed is not None and not declared else parent_chain(sid, declared, self.registry)
            ),
            visibility=visibility,
        )
        self.elements[sid] = focus
        if focus.visibility != "visible":
            self.blocked.add(sid)
        if focus.label:
            self.labels.setdefault(sid, focus.label)
        self.types.setdefault(sid, focus.type)
        return focus

    def tab_semantic_id(self, tab: Mapping[str, Any]) -> str:
        if tab.get("semanticId"):
            return tab["semanticId"]
        base = self.page.get("semanticId") or str(self.page.get("id", "")).split(".")[0]
        return f"{base}.{tab['id']}" if base else tab["id"]

    def label_of(self, semantic_id: str | None) -> str | None:
        if not semantic_id:
            return None
        label = self.labels.get(semantic_id)
        if label:
            return label
        info = self.registry.get(semantic_id)
        return info.label if info and info.label else None

    def type_of(self, semantic_id: str) -> str | None:
        if semantic_id in self.types:
            return self.types[semantic_id]
        info = self.registry.get(semantic_id)
        return info.type if info else None

    def element(self, semantic_id: str) -> Element:
        known = self.elements.get(semantic_id)
        if known:
            return known
        return Element(
            semantic_id=semantic_id,
            type=self.type_of(semantic_id),
            label=self.label_of(semantic_id),
            parent_ids=parent_chain(semantic_id, None, self.registry),
        )

    def is_targetable(self, element: Element) -> bool:
        """Hidden, collapsed, inactive or disabled elements (or inside one) never become targets."""
        if element.visibility != "visible" or element.semantic_id in self.blocked:
            return False
        if any(parent in self.blocked for parent in element.parent_ids):
            return False
        if self.visible_ids is not None and element.semantic_id not in self.visible_ids:
            # Off-screen but focused is fine (keyboard focus); others must be on screen.
            return self.focus is not None and element.semantic_id == self.focus.semantic_id
        return True

    def candidates(self) -> list[Element]:
        """Visible, targetable elements the user could mean, fields first, in screen order."""
        order: list[str] = []
        if self.visible_ids is not None:
            order = list(self.visible_ids)
        for sid in self.elements:
            if sid not in order:
                order.append(sid)
        seen: list[Element] = []
        for sid in order:
            element = self.element(sid)
            if element.type in ("page", "tab") or not element.label:
                continue
            if self.is_targetable(element):
                seen.append(element)
        fields = [e for e in seen if e.type in ("field", "cell")]
        return fields or seen
