"""Accent folding: the one place that decides how "ção" meets "cao".

Three shapes, because callers need three things:

- ``fold``: diacritics removed, case kept (the analyzer folds *after*
  stemming, and code terms keep their own case handling);
- ``fold_lower``: diacritics removed and lower-cased, for comparing keys and
  words (redaction keys, dimension names, number words);
- ``fold_aligned``: lower-cased and folded character by character, *same
  length* as the input, so a match in the folded text maps back to a span of
  the original (the reference resolver rewrites the user's message in place).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


def fold(text: str) -> str:
    """Remove diacritics (ção → cao); keeps case."""
    if text.isascii():  # NFKD leaves ASCII as it is: the common case skips the decomposition
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fold_lower(text: str) -> str:
    """Case-insensitive and accent-free: ``Matrícula`` → ``matricula``."""
    return fold(text.casefold())


def fold_aligned(text: str) -> str:
    """Lowercase, accents removed, *same length* as ``text`` so spans map back."""
    if text.isascii():  # the common case, and str.lower keeps ASCII one character per character
        return text.lower()
    return "".join(map(_fold_char, text))


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    base = unicodedata.normalize("NFKD", ch)[:1] or ch
    low = base.lower()
    return low if len(low) == 1 else base
