"""Guessing the language (pt, en, es) of a short message from word scores.

Callers score the message with the vocabulary they know (the reference
resolver: its deictics and distinctive words; the ontology: function words);
the decision rule is one: a single leader wins; a tie or no evidence goes to
the locale hint when it is among the leaders, else to the default (Portuguese
first, the product's first language).
"""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("pt", "en", "es")
DEFAULT_LANGUAGE = "pt"


def guess_language(scores: Mapping[str, int], *, hint: str | None = None, default: str = DEFAULT_LANGUAGE) -> str:
    """The language with the highest score; ties and zero scores decided by ``hint``, then ``default``."""
    best = max(scores.get(lang, 0) for lang in LANGUAGES)
    leaders = [lang for lang in LANGUAGES if scores.get(lang, 0) == best]
    if len(leaders) == 1 and best > 0:
        return leaders[0]
    hint = (hint or "").lower()[:2]
    if hint in leaders or (best == 0 and hint in LANGUAGES):
        return hint
    return default if default in leaders or best == 0 else leaders[0]
