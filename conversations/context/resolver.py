"""Deterministic reference resolution: what "isso", "este", "aqui" point at.

Runs before any model call, on a validated (and redacted) AgentContext. The
rules, in priority order, are documented in docs/context-engine.md; each
result carries a confidence (exact, high, medium, low). When the context
does not decide between several elements the result is a clarifying
question, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from common.text import fold_aligned, guess_language

from . import vocabulary as V
from .phrasing import element_phrase, is_bare, record_name, rewrite
from .results import (
    CLARIFICATION,
    EXACT,
    HIGH,
    LOW,
    MEDIUM,
    RESOLVED,
    TARGET_ELEMENT,
    TARGET_PAGE,
    TARGET_RECORD,
    TARGET_TAB,
    Clarification,
    Element,
    Option,
    PhraseMatch,
    RecordChange,
    Reference,
    Resolution,
    SemanticInfo,
    Target,
)
from .view import ContextView, parent_chain

# Re-exported: the prompt builder, selectors and tests import these from here.
__all__ = [
    "TARGET_ELEMENT",
    "ContextView",
    "Resolution",
    "SemanticInfo",
    "detect_record_change",
    "parent_chain",
    "record_name",
    "resolve",
]


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
    r"(?<![\w-])(?:para|pra|to|a|en|como|em)\s*(?P<value>-?[0-9]+(?:[.,][0-9]+)?|\"[^\"]{1,200}\"|'[^']{1,200}')"
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
    return guess_language(scores, hint=locale, default=default)


# --------------------------------------------------------------------------- resolution


_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")


def _find_deictics(folded: str) -> list[PhraseMatch]:
    matches = []
    for m in _DEICTIC_RE.finditer(folded):
        phrase = re.sub(r"\s+", " ", m.group(0))
        match = PhraseMatch(m.start(), m.end(), m.group(0), deictic=V.DEICTICS[phrase])
        if phrase in V.DETERMINERS:
            following = _NEXT_WORD.match(folded, m.end())
            if following and following.group(1) not in V.PRONOUN_FOLLOWERS:
                match.noun_end = following.end()
        matches.append(match)
    return matches


def _find_named(folded: str, view: ContextView, taken: list[tuple[int, int]]) -> list[PhraseMatch]:
    """Elements whose label appears in the message (longest label first, no overlaps)."""
    by_label: dict[str, list[Element]] = {}
    for sid in list(view.elements) + (view.visible_ids or []):
        element = view.element(sid)
        if element.label and len(element.label) >= 3 and element.type not in ("page",):
            key = fold_aligned(element.label).strip()
            bucket = by_label.setdefault(key, [])
            if all(e.semantic_id != element.semantic_id for e in bucket):
                bucket.append(element)
    matches: list[PhraseMatch] = []
    occupied = list(taken)
    for key in sorted(by_label, key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])")
        for m in pattern.finditer(folded):
            if any(m.start() < e and s < m.end() for s, e in occupied):
                continue
            occupied.append((m.start(), m.end()))
            for element in by_label[key]:
                matches.append(PhraseMatch(m.start(), m.end(), m.group(0), element=element))
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
    try:
        return float(number) if "." in number else int(number)
    except ValueError:  # never expected with the ASCII-digit pattern; keep the text rather than fail
        return raw


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
    raw = message[start:end]  # original case, same offsets
    if raw[:1] not in "\"'":
        raw = folded[start:end]  # numbers as folded: "²" became "2"
    return True, _parse_value(raw), unit, True


def _asks_about_value(folded: str, target: Target | None) -> bool:
    if any(phrase in folded for phrase in V.VALUE_PHRASES):
        return True
    if target and target.label:
        label = fold_aligned(target.label)
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
    folded = fold_aligned(message)
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
    primary: PhraseMatch | None = None
    references: list[Reference] = []

    def by_kind(kind):
        return next((m for m in deictics if m.deictic.kind == kind), None)

    # 1. A field named in the message.
    if named_ok:
        named_ids = {m.element.semantic_id for m in named_ok}
        first_label = fold_aligned(named_ok[0].element.label)
        same_label = [m.element for m in named_ok if fold_aligned(m.element.label) == first_label]
        if V.FOCUS in kinds and focus_ok and focus.semantic_id not in named_ids:
            clarification = _clarify(language, action, "named_element_differs_from_focus", [focus, named_ok[0].element])
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
        elif V.OTHER in kinds:
            # "E o outro?": the visible candidate that is not the focus; several → ask.
            match = by_kind(V.OTHER)
            others = [c for c in view.candidates() if not (focus is not None and c.semantic_id == focus.semantic_id)]
            if len(others) == 1:
                target, primary = _target_from(others[0], HIGH if focus_ok else MEDIUM), match
            elif others:
                clarification = _clarify(language, action, "several_other_elements", others)
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
            target = Target(
                TARGET_TAB, tab["semanticId"], "tab", tab["title"], (view.page_id,) if view.page_id else (), EXACT
            )
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
            target = _target_from(focus, HIGH if is_bare(folded) else LOW)
        elif is_bare(folded):
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
                candidates = [view.element(target.semantic_id)] + [
                    c for c in candidates if c.semantic_id != target.semantic_id
                ]
            if candidates:
                clarification = _clarify(language, "update", "update_target_uncertain", candidates)
                target = None

    for m in deictics:
        sid = None
        if m is primary and target is not None:
            sid = target.semantic_id
        references.append(
            Reference(m.deictic.kind, m.phrase, sid, target.confidence if m is primary and target else LOW)
        )
    if not deictics and not named_ok and target is not None:
        references.append(Reference("implicit", None, target.semantic_id, target.confidence))

    record_change = detect_record_change(previous_selection, view.selection, language)

    if clarification is not None:
        rewritten = message
    else:
        rewritten = rewrite(message, language, view, target, primary, deictics)

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
