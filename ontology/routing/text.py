"""Message normalization and vocabulary look-ups shared by the classifier and the router."""

from __future__ import annotations

import re
from functools import lru_cache

from common.text import fold, guess_language

from .data import vocabulary

_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s/'?.-]", re.UNICODE)


def normalize(text: str) -> str:
    """Lower case, accents folded, punctuation mostly dropped, single spaces."""
    folded = fold((text or "").lower())
    return _SPACES.sub(" ", _PUNCT.sub(" ", folded)).strip()


@lru_cache(maxsize=1)
def _term_patterns() -> dict[str, list[tuple[str, re.Pattern]]]:
    vocab = vocabulary()
    out: dict[str, list[tuple[str, re.Pattern]]] = {}
    for group in ("biomas", "culturas"):
        out[group] = [
            (key, re.compile(r"\b(" + "|".join(re.escape(normalize(t)) for t in terms) + r")\b"))
            for key, terms in vocab[group].items()
        ]
    out["sintomas"] = [
        (key, re.compile(r"\b(" + "|".join(re.escape(normalize(t)) for t in spec["terms"]) + r")\b"))
        for key, spec in vocab["sintomas"].items()
    ]
    return out


def mentions(group: str, normalized_message: str) -> list[str]:
    """Vocabulary ids of `group` ("biomas", "culturas", "sintomas") named in the message, file order."""
    return [key for key, rx in _term_patterns()[group] if rx.search(normalized_message)]


_LANG_CUES = {
    "pt": re.compile(r"\b(meu|minha|esta|estao|nao|com|solo|folhas|como|voce|qual|o que|de|da|do|no|na)\b"),
    "en": re.compile(r"\b(my|the|is|are|what|how|soil|leaves|should|with|why|and|of)\b"),
    "es": re.compile(r"\b(mi|mis|el|los|las|suelo|hojas|que|como|tiene|esta|del|en|y|por)\b"),
}


def detect_language(normalized_message: str) -> str:
    """pt, en or es by function-word cues; ties and no cues go to Portuguese."""
    return guess_language({lang: len(rx.findall(normalized_message)) for lang, rx in _LANG_CUES.items()})
