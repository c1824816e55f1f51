"""Deterministic reference resolution: what "isso", "este", "aqui" point at.

Runs before any model call, on a validated (and redacted) AgentContext. This
module reads the message (reference words, named labels, language, action),
lets the rule table of ``rules.py`` bind the target, confirms updates, and
rewrites the message. Each result carries a confidence (exact, high, medium,
low); when the context does not decide between several elements the result
is a clarifying question, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from common.text import fold_aligned, guess_language

from . import vocabulary as V
from .phrasing import record_name, rewrite
from .results import (
    CLARIFICATION,
    EXACT,
    HIGH,
    LOW,
    RESOLVED,
    TARGET_ELEMENT,
    Element,
    PhraseMatch,
    RecordChange,
    Reference,
    Resolution,
    SemanticInfo,
    Target,
)
from .rules import Binding, Reading, bind, clarification_for
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


def read(
    message: str,
    context: Mapping[str, Any],
    *,
    registry: Mapping[str, SemanticInfo] | None = None,
    default_language: str = "pt",
) -> Reading:
    """The message as found in the context: what every resolution rule reads."""
    return _read(message, context, registry, default_language)[0]


def _read(message: str, context: Mapping[str, Any], registry, default_language: str) -> tuple[Reading, tuple]:
    """The reading, and the update the message asks for: (is_update, value, unit, has_value)."""
    view = ContextView(context, registry)
    folded = fold_aligned(message)
    deictics = _find_deictics(folded)
    named = _find_named(folded, view, [(m.start, m.end) for m in deictics])
    locale = (context.get("user") or {}).get("locale")
    language = detect_language(folded, [m.deictic.language for m in deictics], locale, default_language)
    update = _detect_update(folded, message)
    if update[0]:
        action = "update"
    elif set(_words(folded)) & V.EXPLAIN_WORDS or "o que" in folded:
        action = "explain"
    else:
        action = "refer"
    named_ok = tuple(m for m in named if view.is_targetable(m.element))
    reading = Reading(view, folded, language, action, tuple(deictics), named_ok)
    notes = []
    if view.focus is not None and not reading.focus_ok:
        notes.append("focus_not_targetable")
    if len(named_ok) < len(named):
        notes.append("named_element_not_targetable")
    if notes:
        reading = replace(reading, notes=tuple(notes))
    return reading, update


def _confirm_update(reading: Reading, binding: Binding, value: Any, unit: str | None, has_value: bool):
    """Updates act on one field: anything short of a high-confidence field is confirmed first.

    Returns (binding, intent).
    """
    target = binding.target
    if target is not None and target.kind == TARGET_ELEMENT and target.confidence in (EXACT, HIGH):
        intent = {"intent": "UPDATE_FIELD", "target": target.semantic_id, "value": value, "unit": unit}
        return binding, intent if has_value else None
    view = reading.view
    candidates = list(view.candidates())
    if target is not None and target.kind == TARGET_ELEMENT:
        candidates = [view.element(target.semantic_id)] + [c for c in candidates if c.semantic_id != target.semantic_id]
    if not candidates:
        return binding, None
    clarification = clarification_for(reading.language, "update", "update_target_uncertain", candidates)
    return replace(binding, target=None, clarification=clarification), None


def _references(reading: Reading, binding: Binding) -> tuple[Reference, ...]:
    references = list(binding.references)
    target = binding.target
    for m in reading.deictics:
        bound = m is binding.primary and target is not None
        references.append(
            Reference(
                m.deictic.kind, m.phrase, target.semantic_id if bound else None, target.confidence if bound else LOW
            )
        )
    if not reading.deictics and not reading.named and target is not None:
        references.append(Reference("implicit", None, target.semantic_id, target.confidence))
    return tuple(references)


def resolve(
    message: str,
    context: Mapping[str, Any],
    *,
    registry: Mapping[str, SemanticInfo] | None = None,
    previous_selection: Mapping[str, Any] | None = None,
    default_language: str = "pt",
) -> Resolution:
    """Bind the message's references to the context (``rules.RULES``); see docs/context-engine.md."""
    reading, (is_update, value, unit, has_value) = _read(message, context, registry, default_language)
    view, folded, language = reading.view, reading.folded, reading.language
    binding = bind(reading)
    intent = None
    if is_update and binding.clarification is None:
        binding, intent = _confirm_update(reading, binding, value, unit, has_value)
    target, clarification = binding.target, binding.clarification

    if clarification is not None:
        rewritten = message
    else:
        rewritten = rewrite(message, language, view, target, binding.primary, list(reading.deictics))
    return Resolution(
        status=CLARIFICATION if clarification else RESOLVED,
        language=language,
        action=reading.action,
        references=_references(reading, binding),
        target=target,
        clarification=clarification,
        rewritten_message=rewritten,
        intent=intent,
        asks_about_value=_asks_about_value(folded, target) if target and target.kind == TARGET_ELEMENT else False,
        record_change=detect_record_change(previous_selection, view.selection, language),
        notes=reading.notes,
    )
