"""Text analysis: Portuguese first, then English and Spanish.

One analyzer for documents and queries, so the same word always becomes the
same term whatever language the surrounding text is in:

1. split into tokens; identifiers and codes (``PRICING_RULES``,
   ``PT-2026-004821``, ``workPermit.components``) stay whole;
2. lower case; stop words (pt + en + es, folded) are dropped;
3. Snowball stemming with the Portuguese, English and Spanish stemmers,
   keeping the shortest stem (ties go to Portuguese). Taking the shortest
   conflates the inflections of each language ("kits"/"kit", "sending"/
   "send", "preços"/"preço") without having to guess the language of a
   three-word question;
4. accent folding *after* stemming: the Portuguese stemmer needs ç/ã/õ to
   find its suffixes.

Word→term results are cached (stemming dominates indexing time).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import Stemmer

from .folding import fold
from .stopwords import STOP_WORDS

# A word, optionally joined to more words by "_", "-", "." or "/" without
# spaces: "PRICING_RULES", "PT-2026-004821", "workPermit.components".
_TOKEN_RE = re.compile(r"[^\W_]+(?:[_\-./][^\W_]+)*", re.UNICODE)
_JOINERS_RE = re.compile(r"[_\-./]+")
_HAS_DIGIT_RE = re.compile(r"\d")

_STEMMERS = (
    Stemmer.Stemmer("portuguese"),
    Stemmer.Stemmer("english"),
    Stemmer.Stemmer("spanish"),
)

MIN_WORD_LENGTH = 2


_PORTUGUESE = _STEMMERS[0]
_WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


# Lower-case word → its stem. A plain dict (bounded) that ``stem_many`` can fill a batch at a time.
_STEM_CACHE: dict[str, str] = {}
_STEM_CACHE_MAX = 200_000


def _shortest(word: str, candidates) -> str:
    best = word
    for candidate in candidates:
        if len(candidate) < len(best):
            best = candidate
    return fold(best)


def stem(word: str) -> str:
    """Shortest Snowball stem over pt/en/es of a lower-case word, folded (ties go to the earlier language)."""
    found = _STEM_CACHE.get(word)
    if found is None:
        found = _shortest(word, [stemmer.stemWord(word) for stemmer in _STEMMERS])
        if len(_STEM_CACHE) < _STEM_CACHE_MAX:
            _STEM_CACHE[word] = found
    return found


def stem_many(words: Iterable[str]) -> None:
    """Work out the stems of many lower-case words at once (one Snowball call per language for the
    whole batch, ``stemWords``, instead of three per word), so that ``stem`` finds them cached."""
    missing = [w for w in dict.fromkeys(words) if w not in _STEM_CACHE][: max(0, _STEM_CACHE_MAX - len(_STEM_CACHE))]
    if missing:
        for word, *candidates in zip(missing, *(stemmer.stemWords(missing) for stemmer in _STEMMERS)):
            _STEM_CACHE[word] = _shortest(word, candidates)


def _is_code(raw: str) -> bool:
    """A joined token is an identifier/code rather than a hyphenated word."""
    if "_" in raw or _HAS_DIGIT_RE.search(raw):
        return True
    # "workPermit.components" (camelCase) or "PT-ABC" (capitals after the first).
    return any(ch.isupper() for ch in raw[1:])


def _word_term(word: str) -> str | None:
    lower = word.lower()
    folded = fold(lower)
    if len(folded) < MIN_WORD_LENGTH and not folded.isdigit():
        return None
    if folded in STOP_WORDS:
        return None
    if folded.isdigit():
        return folded
    return stem(lower)


def code_term(raw: str) -> str:
    """Normalized whole form of an identifier or code (case/accents folded)."""
    return fold(raw.lower()).strip("_-./")


def _analyze_token(raw: str) -> tuple[str, ...]:
    if _JOINERS_RE.search(raw):
        if _is_code(raw):
            term = code_term(raw)
            return (term,) if term else ()
        return tuple(t for part in _JOINERS_RE.split(raw) if part and (t := _word_term(part)))
    term = _word_term(raw)
    return (term,) if term else ()


def tokens(text: str) -> list[str]:
    """Raw tokens (no normalization), identifiers kept whole."""
    return _TOKEN_RE.findall(text or "")


# Raw token → terms. A plain dict (bounded) is markedly faster than lru_cache
# in this loop, which dominates index builds. Values are immutable tuples, so
# concurrent readers and writers are safe under the GIL.
_TOKEN_CACHE: dict[str, tuple[str, ...]] = {}
_TOKEN_CACHE_MAX = 500_000


def _analyze_token_cached(raw: str) -> tuple[str, ...]:
    terms = _analyze_token(raw)
    if len(_TOKEN_CACHE) < _TOKEN_CACHE_MAX:
        _TOKEN_CACHE[raw] = terms
    return terms


def analyze(text: str) -> list[str]:
    """Terms of a text, in order, duplicates kept (term frequency matters)."""
    get = _TOKEN_CACHE.get
    return [
        term
        for raw in _TOKEN_RE.findall(text or "")
        for term in (get(raw) or (() if raw in _TOKEN_CACHE else _analyze_token_cached(raw)))
    ]


def analyze_identifier(identifier: str) -> list[str]:
    """Terms of an ID or alias field: the whole code, then its word parts.

    ``PRICING_RULES`` indexes as ``pricing_rules`` (what a user pasting the
    ID types) plus ``pric`` and ``rul`` (what a user writing words types).
    """
    whole = code_term(identifier)
    if not whole:
        return []
    out = [whole]
    for part in _JOINERS_RE.split(identifier):
        if part and (term := _word_term(part)) and term != whole:
            out.append(term)
    return out


def analyze_fields(fields: Mapping[str, str | Iterable[str]]) -> dict[str, list[str]]:
    """Analyze named fields: ``id``/``aliases`` as identifiers, the rest as text."""
    out: dict[str, list[str]] = {}
    for name, value in fields.items():
        values = [value] if isinstance(value, str) else list(value)
        terms: list[str] = []
        for item in values:
            terms.extend(analyze_identifier(item) if name in ("id", "aliases") else analyze(item))
        out[name] = terms
    return out


def query_key(text: str) -> str:
    """Order- and duplicate-insensitive key of a question (feedback, cache)."""
    return " ".join(sorted(set(analyze(text))))


@lru_cache(maxsize=50_000)
def stem_portuguese(word: str) -> str:
    """Portuguese Snowball stem of a lower-case word, folded."""
    return fold(_PORTUGUESE.stemWord(word))


def content_words(text: str) -> list[str]:
    """Portuguese-stemmed content words, codes and IDs read as their parts.

    For ranking passages of one Portuguese catalog against a question (the
    offline provider), not for the index: there the shortest stem over three
    languages conflates inflections across them, which here merges words a
    passage choice must tell apart. Stop words and the short-word rule are the
    analyzer's.
    """
    out = []
    for word in _WORD_RE.findall((text or "").lower()):
        folded = fold(word)
        if folded in STOP_WORDS or (len(folded) < MIN_WORD_LENGTH and not folded.isdigit()):
            continue
        out.append(stem_portuguese(word))
    return out
