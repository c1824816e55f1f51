"""Situational skills switched on and off by what a message *means*, through the analyzer.

A vocabulary term or a resolution phrase matches when every one of its analyzer terms
(stems, stop words dropped, pt/en/es) is among the message's terms, in any order: "a
erosão já foi controlada", "já controlamos a erosão" and "the erosion is under control"
all carry the terms of "erosão controlada" / "erosion controlled". A negated message
("a erosão ainda não está controlada") switches nothing off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from .data import vocabulary
from .search import analyze
from .text import normalize

# negations read on the folded words (the analyzer drops them as stop words)
_NEGATION = re.compile(r"\b(nao|nunca|jamais|not|never|isn'?t|no longer|nem|ni|tampoco|todavia no|aun no)\b")
# "no" is "in the" in Portuguese and a negation in Spanish and English
_NO = re.compile(r"\bno (esta|estan|fue|se|ha|han|is|was|has|controlad\w*|resuelt\w*)\b")


def _terms(phrase: str) -> frozenset[str]:
    # folded first: the stemmers read "erosión" and "erosion" differently
    return frozenset(analyze(normalize(phrase)))


@lru_cache(maxsize=1)
def _symptom_terms() -> tuple[tuple[str, tuple[frozenset[str], ...]], ...]:
    return tuple(
        (key, tuple(t for t in (_terms(term) for term in spec["terms"]) if t))
        for key, spec in vocabulary()["sintomas"].items()
    )


def negated(normalized_message: str) -> bool:
    return bool(_NEGATION.search(normalized_message) or _NO.search(normalized_message))


def symptoms_by_meaning(message: str) -> list[str]:
    """Vocabulary symptom ids whose terms (any of their phrasings) the message carries."""
    carried = _terms(message)
    return [key for key, options in _symptom_terms() if any(terms <= carried for terms in options)]


def phrase_carried(message_terms: frozenset[str], phrases: Sequence[str]) -> bool:
    return any((terms := _terms(p)) and terms <= message_terms for p in phrases)


def situational_changes(
    message: str,
    normalized_message: str,
    symptoms: Sequence[str],
    active: Sequence[str],
    catalog: Mapping[str, object],
) -> tuple[list[str], list[str]]:
    """(switched on, switched off): on by a symptom the skill lists, off by a resolution
    phrase it lists (by meaning, not negated). A message that resolves a skill never
    switches it on again in the same breath."""
    carried = _terms(message)
    resolved_msg = not negated(normalized_message)
    on, off = [], []
    for skill in catalog.values():
        spec = getattr(skill, "situational", None) or {}
        if not spec:
            continue
        triggers = set((spec.get("ativacao") or {}).get("sintomas") or ())
        ends = (spec.get("desativacao") or {}).get("termos") or ()
        resolves = resolved_msg and phrase_carried(carried, ends)
        if skill.id in active and resolves:
            off.append(skill.id)
        elif skill.id not in active and not resolves and triggers & set(symptoms):
            on.append(skill.id)
    return on, off
