"""Explicit descriptions of targets in pt, en and es, and the message rewrite."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from common.text import fold_aligned

from . import vocabulary as V
from .redaction import contains_mask
from .results import TARGET_ELEMENT, TARGET_PAGE, TARGET_RECORD, TARGET_TAB, PhraseMatch, Target
from .view import ContextView

_WORD_RE = re.compile(r"[\w%]+")


def is_bare(folded: str) -> bool:
    """ "Explique." / "O que é?" / "Explain" — a request with no object of its own."""
    return len(_WORD_RE.findall(folded)) <= 3


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _pt_article(title: str) -> str:
    """Article for a page title in "da Permissão de Trabalho" (heuristic on the first word)."""
    first = fold_aligned(title.split()[0]) if title.split() else ""
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
        parts.append(
            {"pt": f" do registro {record}", "en": f" of record {record}", "es": f" del registro {record}"}[language]
        )
    page_title = view.page.get("title")
    tab = view.active_tab
    if target.kind == TARGET_PAGE:
        if tab:
            return {
                "pt": f", na aba {tab['title']}",
                "en": f", on the {tab['title']} tab",
                "es": f", en la pestaña {tab['title']}",
            }[language]
        return ""
    if tab and target.kind != TARGET_TAB:
        parts.append(
            {
                "pt": f", na aba {tab['title']}",
                "en": f", in the {tab['title']} tab",
                "es": f", en la pestaña {tab['title']}",
            }[language]
        )
        if page_title:
            parts.append(
                {
                    "pt": f" {_pt_article(page_title)} {page_title}",
                    "en": f" of {page_title}",
                    "es": f" de {page_title}",
                }[language]
            )
    elif page_title:
        parts.append(
            {
                "pt": f", na página {page_title}",
                "en": f", on the {page_title} page",
                "es": f", en la página {page_title}",
            }[language]
        )
    return "".join(parts)


def describe_target(language: str, view: ContextView, target: Target, case: str = V.PLAIN) -> str:
    """The explicit noun phrase a deictic is replaced with."""
    if target.kind == TARGET_RECORD:
        return element_phrase(language, "record", record_name(view.selection) or "", case)
    if target.kind == TARGET_PAGE:
        base = element_phrase(language, "page", target.label or "", case)
        return base + location_suffix(language, view, target)
    base = element_phrase(
        language,
        target.type if target.kind == TARGET_ELEMENT else "tab",
        target.label or target.semantic_id or "",
        case,
    )
    return base + location_suffix(language, view, target)


def _anchor(message: str, primary: PhraseMatch, deictics: list[PhraseMatch]):
    """Where the description replaces the reference, in which case, and the reference merged into it."""
    start, case = primary.start, primary.deictic.case
    if primary.deictic.kind not in (V.VIEWPORT_TOP, V.VIEWPORT_BOTTOM):
        return start, case, None
    # "esse item aqui embaixo" is one reference; "o que está acima" is a place.
    merged = next(
        (m for m in deictics if m.deictic.kind == V.FOCUS and m.end <= start and not message[m.end : start].strip()),
        None,
    )
    noun_phrase = V.POSITIONAL_NOUN_PHRASE.search(fold_aligned(message[:start]))
    if merged is not None:
        return merged.start, merged.deictic.case, merged
    if noun_phrase is not None:
        return noun_phrase.start(), V.PLAIN, None
    return start, V.IN, None


def rewrite(
    message: str,
    language: str,
    view: ContextView,
    target: Target | None,
    primary: PhraseMatch | None,
    deictics: list[PhraseMatch],
) -> str:
    """Make the message explicit: the primary reference becomes a full description."""
    if target is None:
        return message
    edits: list[tuple[int, int, str]] = []
    merged = None
    if primary is not None and primary.element is not None:
        # A named element: keep the user's words, add where it lives after the name.
        edits.append((primary.end, primary.end, location_suffix(language, view, target)))
    elif primary is not None and primary.noun_end is not None:
        # "Qual o prazo deste equipamento?" → "… deste equipamento (o registro PT-…)?"
        edits.append((primary.noun_end, primary.noun_end, f" ({describe_target(language, view, target)})"))
    elif primary is not None:
        start, case, merged = _anchor(message, primary, deictics)
        text = describe_target(language, view, target, case)
        if start == 0 or message[:start].rstrip().endswith((".", "?", "!", "¿")):
            text = _capitalize(text)
        edits.append((start, primary.end, text))
    for m in deictics:
        if m is primary or (primary is not None and m is merged):
            continue
        if m.noun_end is not None:
            continue  # a determiner is grammar, not a removable reference
        if m.deictic.kind in (V.PAGE, V.TAB) or (m.deictic.kind == V.SELECTION and view.selection):
            edits.append((m.start, m.end, ""))  # already said by the description
    if not edits or primary is None:
        description = describe_target(language, view, target)
        stripped = message.rstrip()
        body = stripped.rstrip(".?!")
        tail = stripped[len(body) :] or "."
        if is_bare(fold_aligned(message)):
            return f"{body} {description}{tail}".strip()
        context_word = {"pt": "contexto", "en": "context", "es": "contexto"}[language]
        return f"{stripped} ({context_word}: {description})"
    out = message
    for start, end, text in sorted(edits, key=lambda e: e[0], reverse=True):
        out = out[:start] + text + out[end:]
    out = re.sub(r"\s{2,}", " ", out)
    out = re.sub(r"\s+([?.!,])", r"\1", out)
    return out.strip()
