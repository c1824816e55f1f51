"""Reference resolution as an ordered table of small rules.

Each rule reads the same ``Reading`` of a message against its context and
either does not apply (``None``: the next rule is tried) or decides a
``Binding``: a target, or a clarifying question instead of a guess. The first
rule that applies decides; ``RULES`` is the priority order documented in
docs/context-engine.md:

1. an element named in the message (its label);
2. a reference word, by kind: a viewport edge ("o primeiro"), "o outro",
   the focus ("isso"), the selected record ("este registro"), the tab, the
   page; a reference word bound to nothing better is the page, low;
3. no reference word: the focus ("Explique." means the focused field); a bare
   message without a focus means the only candidate, or asks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from common.text import fold_aligned

from . import vocabulary as V
from .phrasing import element_phrase, is_bare, record_name
from .results import (
    EXACT,
    HIGH,
    LOW,
    MEDIUM,
    TARGET_ELEMENT,
    TARGET_PAGE,
    TARGET_RECORD,
    TARGET_TAB,
    Clarification,
    Element,
    Option,
    PhraseMatch,
    Reference,
    Target,
)
from .view import ContextView


@dataclass(frozen=True)
class Reading:
    """What every rule reads: the message as found in the context."""

    view: ContextView
    folded: str
    language: str
    action: str  # refer | explain | update
    deictics: tuple[PhraseMatch, ...]  # reference words, in message order
    named: tuple[PhraseMatch, ...]  # targetable elements whose label the message names
    notes: tuple[str, ...] = ()  # what was found but could not be a target (hidden focus, ...)

    @property
    def focus(self) -> Element | None:
        return self.view.focus

    @cached_property
    def focus_ok(self) -> bool:
        return self.view.focus is not None and self.view.is_targetable(self.view.focus)

    def deictic(self, kind: str) -> PhraseMatch | None:
        return next((m for m in self.deictics if m.deictic.kind == kind), None)

    def clarify(self, reason: str, options: list[Element]) -> Binding:
        return Binding(clarification=clarification_for(self.language, self.action, reason, options))


@dataclass(frozen=True)
class Binding:
    target: Target | None = None
    primary: PhraseMatch | None = None  # the phrase the target was bound through
    clarification: Clarification | None = None
    references: tuple[Reference, ...] = ()  # named references (reference words are added by the resolver)


Rule = Callable[[Reading], Binding | None]


def element_target(element: Element, confidence: str) -> Target:
    kind = TARGET_TAB if element.type == "tab" else TARGET_ELEMENT
    return Target(kind, element.semantic_id, element.type, element.label, element.parent_ids, confidence)


def page_target(view: ContextView, confidence: str) -> Target:
    return Target(TARGET_PAGE, view.page_id, "page", view.page.get("title"), (), confidence)


def record_target(view: ContextView, confidence: str) -> Target:
    return Target(TARGET_RECORD, None, "record", record_name(view.selection), (), confidence)


def clarification_for(language: str, action: str, reason: str, options: list[Element]) -> Clarification:
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


def _only_candidate(r: Reading, confidence: str, primary: PhraseMatch | None, reason: str) -> Binding | None:
    """The one visible candidate; several → ask; none → None."""
    candidates = r.view.candidates()
    if len(candidates) > 1:
        return r.clarify(reason, candidates)
    if candidates:
        return Binding(element_target(candidates[0], confidence), primary)
    return None


# ----------------------------------------------------------------- 1. named


def named_element(r: Reading) -> Binding | None:
    """A label in the message names an element; if it contradicts "isso" or is ambiguous, ask."""
    if not r.named:
        return None
    named_ids = {m.element.semantic_id for m in r.named}
    first_label = fold_aligned(r.named[0].element.label)
    same_label = [m.element for m in r.named if fold_aligned(m.element.label) == first_label]
    focus_named = r.focus_ok and r.focus.semantic_id in named_ids
    if r.deictic(V.FOCUS) and r.focus_ok and not focus_named:
        return r.clarify("named_element_differs_from_focus", [r.focus, r.named[0].element])
    if len(same_label) > 1 and not focus_named:
        return r.clarify("label_matches_several_elements", same_label)
    chosen = next((m for m in r.named if r.focus_ok and m.element.semantic_id == r.focus.semantic_id), r.named[0])
    references = tuple(Reference("named", m.phrase, m.element.semantic_id, EXACT) for m in r.named)
    return Binding(element_target(chosen.element, EXACT), chosen, references=references)


# --------------------------------------------------------- 2. reference words


def unbound_reference(r: Reading) -> Binding | None:
    """A reference word nothing better binds: the page, flagged low."""
    if not r.deictics:
        return None
    return Binding(page_target(r.view, LOW), r.deictics[0])


def viewport_edge(r: Reading) -> Binding | None:
    """ "O de cima" / "the last one": the top or bottom visible element the front end reported."""
    match = r.deictic(V.VIEWPORT_TOP) or r.deictic(V.VIEWPORT_BOTTOM)
    if match is None:
        return None
    key = "topVisibleElement" if match.deictic.kind == V.VIEWPORT_TOP else "bottomVisibleElement"
    sid = r.view.viewport.get(key)
    element = r.view.element(sid) if sid else None
    if element is not None and r.view.is_targetable(element):
        return Binding(element_target(element, MEDIUM), match)
    return _only_candidate(r, LOW, match, "viewport_edge_unknown") or unbound_reference(r)


def other_element(r: Reading) -> Binding | None:
    """ "E o outro?": the visible candidate that is not the focus; several → ask."""
    match = r.deictic(V.OTHER)
    if match is None:
        return None
    focus = r.focus
    others = [c for c in r.view.candidates() if not (focus is not None and c.semantic_id == focus.semantic_id)]
    if len(others) == 1:
        return Binding(element_target(others[0], HIGH if r.focus_ok else MEDIUM), match)
    if others:
        return r.clarify("several_other_elements", others)
    return unbound_reference(r)


def focus_reference(r: Reading) -> Binding | None:
    """ "Isso": the focused element; without a usable focus, the only candidate (several → ask)."""
    match = r.deictic(V.FOCUS)
    if match is None:
        return None
    if r.focus_ok:
        return Binding(element_target(r.focus, EXACT), match)
    return _only_candidate(r, MEDIUM, match, "no_focus_several_elements") or unbound_reference(r)


def selection_reference(r: Reading) -> Binding | None:
    """ "Este registro": the selected record; without one, the focus."""
    match = r.deictic(V.SELECTION)
    if match is None:
        return None
    if r.view.selection:
        return Binding(record_target(r.view, EXACT), match)
    if r.focus_ok:
        return Binding(element_target(r.focus, MEDIUM), match)
    return unbound_reference(r)


def tab_reference(r: Reading) -> Binding | None:
    """ "Esta aba": the active tab (only when the context has one)."""
    match = r.deictic(V.TAB)
    tab = r.view.active_tab
    if match is None or not tab:
        return None
    parents = (r.view.page_id,) if r.view.page_id else ()
    return Binding(Target(TARGET_TAB, tab["semanticId"], "tab", tab["title"], parents, EXACT), match)


def page_reference(r: Reading) -> Binding | None:
    """ "Aqui" / "esta página": the page."""
    match = r.deictic(V.PAGE)
    if match is None:
        return None
    return Binding(page_target(r.view, EXACT), match)


# ------------------------------------------------------- 3. no reference word


def implicit_focus(r: Reading) -> Binding | None:
    """ "Explique." means the focused field; a longer message about something else, only weakly."""
    if r.deictics or not r.focus_ok:
        return None
    return Binding(element_target(r.focus, HIGH if is_bare(r.folded) else LOW))


def bare_message(r: Reading) -> Binding | None:
    """A bare message with no focus: the only candidate (several → ask), else the record, else the page."""
    if r.deictics or r.focus_ok or not is_bare(r.folded):
        return None
    found = _only_candidate(r, MEDIUM, None, "no_focus_several_elements")
    if found is not None:
        return found
    if r.view.selection:
        return Binding(record_target(r.view, MEDIUM))
    return Binding(page_target(r.view, LOW))


RULES: tuple[Rule, ...] = (
    named_element,
    viewport_edge,
    other_element,
    focus_reference,
    selection_reference,
    tab_reference,
    page_reference,
    unbound_reference,
    implicit_focus,
    bare_message,
)


def bind(reading: Reading, rules: tuple[Rule, ...] = RULES) -> Binding:
    """The first rule that applies decides; none → nothing bound."""
    for rule in rules:
        binding = rule(reading)
        if binding is not None:
            return binding
    return Binding()
