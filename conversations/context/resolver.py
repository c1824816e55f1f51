"""Deterministic reference resolution: what "isso", "este", "aqui" point at.

Runs before any model call, on a validated (and redacted) AgentContext. The
rules, in priority order, are documented in docs/context-engine.md; each
result carries a confidence (exact, high, medium, low). When the context
does not decide between several elements the result is a clarifying
question, never a guess.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import vocabulary as V
from .redaction import contains_mask

EXACT, HIGH, MEDIUM, LOW = "exact", "high", "medium", "low"
CONFIDENCE_ORDER = (EXACT, HIGH, MEDIUM, LOW)

RESOLVED = "resolved"
CLARIFICATION = "clarification"

TARGET_ELEMENT, TARGET_RECORD, TARGET_TAB, TARGET_PAGE = "element", "record", "tab", "page"

MAX_PARENT_DEPTH = 12


# --------------------------------------------------------------------------- data


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


# --------------------------------------------------------------------------- text


def fold(text: str) -> str:
    """Lowercase, accents removed, *same length* as ``text`` so spans map back."""
    out = []
    for ch in text:
        base = unicodedata.normalize("NFKD", ch)[:1] or ch
        low = base.lower()
        out.append(low if len(low) == 1 else base)
    return "".join(out)


def _phrase_regex(phrases) -> re.Pattern[str]:
    ordered = sorted(phrases, key=len, reverse=True)
    body = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered)
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])")


_DEICTIC_RE = _phrase_regex(V.DEICTICS)
_WORD_RE = re.compile(r"[\w%]+")
_UPDATE_RE = re.compile(
    r"(?<![\w-])(?P<verb>" + "|".join(sorted(V.UPDATE_VERBS, key=len, reverse=True)) + r")(?![\w-])"
)
_VALUE_RE = re.compile(
    r"(?<![\w-])(?:para|pra|to|a|en|como|em)\s*(?P<value>-?\d+(?:[.,]\d+)?|\"[^\"]{1,200}\"|'[^']{1,200}')"
    r"\s*(?P<unit>%|[a-z]+(?:-[a-z]+)?)?"
)


def _words(folded: str) -> list[str]:
    return _WORD_RE.findall(folded)


def detect_language(folded: str, deictic_languages: list[str], locale: str | None, default: str = "pt") -> str:
    scores = {"pt": 0, "en": 0, "es": 0}
    for lang in deictic_languages:
        if lang:
            scores[lang] += 3
    for word in _words(folded):
        for lang in scores:
            if word in V.DISTINCTIVE_WORDS[lang]:
                scores[lang] += 2
            elif word in V.LANGUAGE_WORDS[lang]:
                scores[lang] += 1
    best = max(scores.values())
    leaders = [lang for lang, score in scores.items() if score == best]
    if len(leaders) == 1 and best > 0:
        return leaders[0]
    hint = (locale or "").lower()[:2]
    if hint in leaders or (best == 0 and hint in scores):
        return hint
    return default if default in leaders or best == 0 else leaders[0]


# --------------------------------------------------------------------------- context model


def dotted_parents(semantic_id: str) -> list[str]:
    """``a.b.c`` → ``['a.b', 'a']`` (nearest first)."""
    parts = semantic_id.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


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
            dotted = dotted_parents(current)
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

        self.focus: Element | None = None
        raw_focus = context.get("focus")
        if raw_focus:
            sid = raw_focus["semanticId"]
            self.focus = Element(
                semantic_id=sid,
                type=raw_focus.get("type"),
                label=raw_focus.get("label") or self.label_of(sid),
                parent_ids=parent_chain(sid, raw_focus.get("parentIds"), self.registry),
                visibility=raw_focus.get("visibility", "visible"),
            )
            if self.focus.visibility != "visible":
                self.blocked.add(sid)
            if self.focus.label:
                self.labels.setdefault(sid, self.focus.label)
            self.types.setdefault(sid, self.focus.type)
            self.elements.setdefault(sid, self.focus)

        self.visible_ids: list[str] | None = None
        if self.viewport.get("visibleSemanticIds") is not None:
            self.visible_ids = list(self.viewport["visibleSemanticIds"])

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


# --------------------------------------------------------------------------- rewriting


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _pt_article(title: str) -> str:
    """Article for a page title in "da Permissão de Trabalho" (heuristic on the first word)."""
    first = fold(title.split()[0]) if title.split() else ""
    plural = first.endswith("s") and not first.endswith(("ss", "us", "is", "es")) or first.endswith("oes")
    stem = first[:-1] if plural and not first.endswith("oes") else first
    feminine = first.endswith("oes") or stem.endswith(("cao", "sao", "dade", "gem", "a", "ie", "ca", "tude"))
    if plural:
        return "das" if feminine else "dos"
    return "da" if feminine else "do"


def _noun(language: str, type_: str | None) -> tuple[str, str]:
    table = V.NOUNS[language]
    return table.get(type_, table[None])


def _article_for(language: str, article: str, case: str) -> str:
    if case == V.PLAIN:
        return article
    return V.CONTRACTIONS.get((language, case, article), article)


def element_phrase(language: str, type_: str | None, label: str, case: str = V.PLAIN) -> str:
    """``o campo Validade`` / ``do campo Validade`` / ``the Validade field`` / ``el campo Validade``."""
    article, noun = _noun(language, type_)
    art = _article_for(language, article, case)
    if language == "en":
        return f"{art} {label} {noun}"
    return f"{art} {noun} {label}"


def record_name(selection: Mapping[str, Any] | None) -> str | None:
    if not selection:
        return None
    name = selection.get("displayName")
    if name and not contains_mask(name):
        return name
    return f"{selection.get('entityType')} {selection.get('entityId')}"


def location_suffix(language: str, view: ContextView, target: Target) -> str:
    """`` do registro X, na aba Y da Z`` — where the target lives, for the rewrite."""
    parts = []
    record = record_name(view.selection)
    if record and target.kind not in (TARGET_RECORD, TARGET_PAGE, TARGET_TAB):
        parts.append({"pt": f" do registro {record}", "en": f" of record {record}", "es": f" del registro {record}"}[language])
    page_title = view.page.get("title")
    tab = view.active_tab
    if target.kind == TARGET_PAGE:
        if tab:
            return {"pt": f", na aba {tab['title']}", "en": f", on the {tab['title']} tab", "es": f", en la pestaña {tab['title']}"}[language]
        return ""
    if tab and target.kind != TARGET_TAB:
        parts.append({"pt": f", na aba {tab['title']}", "en": f", in the {tab['title']} tab", "es": f", en la pestaña {tab['title']}"}[language])
        if page_title:
            parts.append({"pt": f" {_pt_article(page_title)} {page_title}", "en": f" of {page_title}", "es": f" de {page_title}"}[language])
    elif page_title:
        parts.append({"pt": f", na página {page_title}", "en": f", on the {page_title} page", "es": f", en la página {page_title}"}[language])
    return "".join(parts)


def describe_target(language: str, view: ContextView, target: Target, case: str = V.PLAIN) -> str:
    """The explicit noun phrase a deictic is replaced with."""
    if target.kind == TARGET_RECORD:
        return element_phrase(language, "record", record_name(view.selection) or "", case)
    if target.kind == TARGET_PAGE:
        base = element_phrase(language, "page", target.label or "", case)
        return base + location_suffix(language, view, target)
    base = element_phrase(language, target.type if target.kind == TARGET_ELEMENT else "tab", target.label or target.semantic_id or "", case)
    return base + location_suffix(language, view, target)


# --------------------------------------------------------------------------- resolution


@dataclass
class _Match:
    start: int
    end: int
    phrase: str
    deictic: V.Deictic | None = None
    element: Element | None = None


def _find_deictics(folded: str) -> list[_Match]:
    return [
        _Match(m.start(), m.end(), m.group(0), deictic=V.DEICTICS[re.sub(r"\s+", " ", m.group(0))])
        for m in _DEICTIC_RE.finditer(folded)
    ]


def _find_named(folded: str, view: ContextView, taken: list[tuple[int, int]]) -> list[_Match]:
    """Elements whose label appears in the message (longest label first, no overlaps)."""
    by_label: dict[str, list[Element]] = {}
    for sid in list(view.elements) + (view.visible_ids or []):
        element = view.element(sid)
        if element.label and len(element.label) >= 3 and element.type not in ("page",):
            key = fold(element.label).strip()
            bucket = by_label.setdefault(key, [])
            if all(e.semantic_id != element.semantic_id for e in bucket):
                bucket.append(element)
    matches: list[_Match] = []
    occupied = list(taken)
    for key in sorted(by_label, key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
        for m in pattern.finditer(folded):
            if any(m.start() < e and s < m.end() for s, e in occupied):
                continue
            occupied.append((m.start(), m.end()))
            for element in by_label[key]:
                matches.append(_Match(m.start(), m.end(), m.group(0), element=element))
            break
    matches.sort(key=lambda m: m.start)
    return matches


def _target_from(element: Element, confidence: str) -> Target:
    kind = TARGET_TAB if element.type == "tab" else TARGET_ELEMENT
    return Target(kind, element.semantic_id, element.type, element.label, element.parent_ids, confidence)


def _clarify(language: str, action: str, reason: str, options: list[Element]) -> Clarification:
    options = options[:3]
    case = "to" if action == "refer" else V.PLAIN
    phrases = [element_phrase(language, o.type, o.label or o.semantic_id, case) for o in options]
    if len(phrases) == 1:
        joined = phrases[0]
    else:
        joined = ", ".join(phrases[:-1]) + f" {V.OR_WORD[language]} " + phrases[-1]
    question = V.CLARIFY_TEMPLATES[(language, action)].format(options=joined)
    return Clarification(
        reason=reason,
        question=question,
        options=tuple(Option(o.semantic_id, o.label or o.semantic_id) for o in options),
    )


def _parse_value(raw: str) -> Any:
    if raw[:1] in "\"'":
        return raw[1:-1]
    number = raw.replace(",", ".")
    return float(number) if "." in number else int(number)


def _detect_update(folded: str, message: str) -> tuple[bool, Any, str | None, bool]:
    """(is_update, value, unit, has_value) for "Altere isso para 30 dias."."""
    verb = _UPDATE_RE.search(folded)
    if not verb:
        return False, None, None, False
    value_match = _VALUE_RE.search(folded, verb.end())
    if not value_match:
        return True, None, None, False
    unit_word = value_match.group("unit")
    unit = V.UNITS.get(unit_word) if unit_word else None
    start, end = value_match.span("value")
    return True, _parse_value(message[start:end]), unit, True  # original case, same offsets


def _is_bare(folded: str) -> bool:
    """"Explique." / "O que é?" / "Explain" — a request with no object of its own."""
    words = _words(folded)
    return len(words) <= 3


def _asks_about_value(folded: str, target: Target | None) -> bool:
    if any(phrase in folded for phrase in V.VALUE_PHRASES):
        return True
    if target and target.label:
        label = fold(target.label)
        for interrogative in V.VALUE_INTERROGATIVES:
            idx = folded.find(interrogative)
            if idx != -1 and label in folded[idx:]:
                return True
    return False


def detect_record_change(
    previous: Mapping[str, Any] | None, current: Mapping[str, Any] | None, language: str
) -> RecordChange | None:
    """The selected record differs from the one of the session's previous context."""
    if not previous:
        return None
    prev_key = (previous.get("entityType"), previous.get("entityId"))
    if current and (current.get("entityType"), current.get("entityId")) == prev_key:
        return None
    old = record_name(previous)
    prev = {"entityType": previous.get("entityType"), "entityId": previous.get("entityId")}
    if current:
        new = record_name(current)
        notice = V.RECORD_CHANGED[language].format(old=old, new=new)
        cur = {"entityType": current.get("entityType"), "entityId": current.get("entityId")}
        return RecordChange(prev, cur, notice)
    return RecordChange(prev, None, V.RECORD_CLEARED[language].format(old=old))


def resolve(
    message: str,
    context: Mapping[str, Any],
    *,
    registry: Mapping[str, SemanticInfo] | None = None,
    previous_selection: Mapping[str, Any] | None = None,
    default_language: str = "pt",
) -> Resolution:
    """Bind the message's references to the context; see docs/context-engine.md."""
    view = ContextView(context, registry)
    folded = fold(message)
    deictics = _find_deictics(folded)
    named = _find_named(folded, view, [(m.start, m.end) for m in deictics])
    locale = (context.get("user") or {}).get("locale")
    language = detect_language(folded, [m.deictic.language for m in deictics], locale, default_language)

    is_update, value, unit, has_value = _detect_update(folded, message)
    words = set(_words(folded))
    if is_update:
        action = "update"
    elif words & V.EXPLAIN_WORDS or "o que" in folded:
        action = "explain"
    else:
        action = "refer"

    notes: list[str] = []
    focus = view.focus
    focus_ok = focus is not None and view.is_targetable(focus)
    if focus is not None and not focus_ok:
        notes.append("focus_not_targetable")

    kinds = {m.deictic.kind for m in deictics}
    named_ok = [m for m in named if view.is_targetable(m.element)]
    if len(named_ok) < len(named):
        notes.append("named_element_not_targetable")

    target: Target | None = None
    clarification: Clarification | None = None
    primary: _Match | None = None
    references: list[Reference] = []

    def by_kind(kind):
        return next((m for m in deictics if m.deictic.kind == kind), None)

    # 1. A field named in the message.
    if named_ok:
        named_ids = {m.element.semantic_id for m in named_ok}
        first_label = fold(named_ok[0].element.label)
        same_label = [m.element for m in named_ok if fold(m.element.label) == first_label]
        if V.FOCUS in kinds and focus_ok and focus.semantic_id not in named_ids:
            clarification = _clarify(
                language, action, "named_element_differs_from_focus", [focus, named_ok[0].element]
            )
        elif len(same_label) > 1 and not (focus_ok and focus.semantic_id in named_ids):
            clarification = _clarify(language, action, "label_matches_several_elements", same_label)
        else:
            chosen = next((m for m in named_ok if focus_ok and m.element.semantic_id == focus.semantic_id), named_ok[0])
            target = _target_from(chosen.element, EXACT)
            primary = chosen
            for m in named_ok:
                references.append(Reference("named", m.phrase, m.element.semantic_id, EXACT))

    # 2. Deictics, by kind.
    if target is None and clarification is None:
        positional = by_kind(V.VIEWPORT_TOP) or by_kind(V.VIEWPORT_BOTTOM)
        if positional:
            key = "topVisibleElement" if positional.deictic.kind == V.VIEWPORT_TOP else "bottomVisibleElement"
            sid = view.viewport.get(key)
            element = view.element(sid) if sid else None
            if element is not None and view.is_targetable(element):
                target, primary = _target_from(element, MEDIUM), positional
            else:
                candidates = view.candidates()
                if len(candidates) > 1:
                    clarification = _clarify(language, action, "viewport_edge_unknown", candidates)
                elif candidates:
                    target, primary = _target_from(candidates[0], LOW), positional
        elif V.FOCUS in kinds:
            match = by_kind(V.FOCUS)
            if focus_ok:
                target, primary = _target_from(focus, EXACT), match
            else:
                candidates = view.candidates()
                if len(candidates) > 1:
                    clarification = _clarify(language, action, "no_focus_several_elements", candidates)
                elif candidates:
                    target, primary = _target_from(candidates[0], MEDIUM), match
        elif V.SELECTION in kinds:
            match = by_kind(V.SELECTION)
            if view.selection:
                target = Target(TARGET_RECORD, None, "record", record_name(view.selection), (), EXACT)
                primary = match
            elif focus_ok:
                target, primary = _target_from(focus, MEDIUM), match
        elif V.TAB in kinds and view.active_tab:
            tab = view.active_tab
            target = Target(TARGET_TAB, tab["semanticId"], "tab", tab["title"], (view.page_id,) if view.page_id else (), EXACT)
            primary = by_kind(V.TAB)
        elif V.PAGE in kinds:
            target = Target(TARGET_PAGE, view.page_id, "page", view.page.get("title"), (), EXACT)
            primary = by_kind(V.PAGE)

    # 3. No reference words: "Explique." means the focus (seed §1).
    if target is None and clarification is None:
        if deictics:
            # A reference we could not bind to anything better: the page, flagged low.
            target = Target(TARGET_PAGE, view.page_id, "page", view.page.get("title"), (), LOW)
            primary = deictics[0]
        elif focus_ok:
            target = _target_from(focus, HIGH if _is_bare(folded) else LOW)
        elif _is_bare(folded):
            candidates = view.candidates()
            if len(candidates) > 1:
                clarification = _clarify(language, action, "no_focus_several_elements", candidates)
            elif candidates:
                target = _target_from(candidates[0], MEDIUM)
            elif view.selection:
                target = Target(TARGET_RECORD, None, "record", record_name(view.selection), (), MEDIUM)
            else:
                target = Target(TARGET_PAGE, view.page_id, "page", view.page.get("title"), (), LOW)

    # Updates act on one field: anything short of high confidence is confirmed first.
    intent = None
    if is_update and clarification is None:
        if target is not None and target.kind == TARGET_ELEMENT and target.confidence in (EXACT, HIGH):
            if has_value:
                intent = {"intent": "UPDATE_FIELD", "target": target.semantic_id, "value": value, "unit": unit}
        else:
            candidates = [e for e in view.candidates()]
            if target is not None and target.kind == TARGET_ELEMENT:
                candidates = [view.element(target.semantic_id)] + [c for c in candidates if c.semantic_id != target.semantic_id]
            if candidates:
                clarification = _clarify(language, "update", "update_target_uncertain", candidates)
                target = None

    for m in deictics:
        sid = None
        if m is primary and target is not None:
            sid = target.semantic_id
        references.append(Reference(m.deictic.kind, m.phrase, sid, target.confidence if m is primary and target else LOW))
    if not deictics and not named_ok and target is not None:
        references.append(Reference("implicit", None, target.semantic_id, target.confidence))

    record_change = detect_record_change(previous_selection, view.selection, language)

    if clarification is not None:
        rewritten = message
    else:
        rewritten = _rewrite(message, language, view, target, primary, deictics)

    return Resolution(
        status=CLARIFICATION if clarification else RESOLVED,
        language=language,
        action=action,
        references=tuple(references),
        target=target,
        clarification=clarification,
        rewritten_message=rewritten,
        intent=intent,
        asks_about_value=_asks_about_value(folded, target) if target and target.kind == TARGET_ELEMENT else False,
        record_change=record_change,
        notes=tuple(notes),
    )


def _rewrite(
    message: str,
    language: str,
    view: ContextView,
    target: Target | None,
    primary: _Match | None,
    deictics: list[_Match],
) -> str:
    """Make the message explicit: the primary reference becomes a full description."""
    if target is None:
        return message
    edits: list[tuple[int, int, str]] = []
    merged = None
    if primary is not None and primary.element is not None:
        # A named element: keep the user's words, add where it lives after the name.
        edits.append((primary.end, primary.end, location_suffix(language, view, target)))
    elif primary is not None:
        start, case = primary.start, primary.deictic.case
        positional = primary.deictic.kind in (V.VIEWPORT_TOP, V.VIEWPORT_BOTTOM)
        merged = None
        if positional:
            # "esse item aqui embaixo" is one reference; "o que está acima" is a place.
            merged = next(
                (m for m in deictics if m.deictic.kind == V.FOCUS and m.end <= start and not message[m.end:start].strip()),
                None,
            )
            if merged is not None:
                start, case = merged.start, merged.deictic.case
            else:
                case = V.IN
        text = describe_target(language, view, target, case)
        if start == 0 or message[:start].rstrip().endswith((".", "?", "!", "¿")):
            text = _capitalize(text)
        edits.append((start, primary.end, text))
    for m in deictics:
        if m is primary or (primary is not None and m is merged):
            continue
        if m.deictic.kind in (V.PAGE, V.TAB) or (m.deictic.kind == V.SELECTION and view.selection):
            edits.append((m.start, m.end, ""))  # already said by the description
    if not edits or primary is None:
        description = describe_target(language, view, target)
        stripped = message.rstrip()
        body = stripped.rstrip(".?!")
        tail = stripped[len(body):] or "."
        if _is_bare(fold(message)):
            return f"{body} {description}{tail}".strip()
        context_word = {"pt": "contexto", "en": "context", "es": "contexto"}[language]
        return f"{stripped} ({context_word}: {description})"
    out = message
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:start] + text + out[end:]
    out = re.sub(r"\s{2,}", " ", out)
    out = re.sub(r"\s+([?.!,])", r"\1", out)
    return out.strip()
