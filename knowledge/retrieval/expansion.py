"""Query expansion: what a query term may also be called, as weighted alternatives.

The router asks one question per query term it does not know (or, for
curator synonyms, per term): ``QueryExpander.alternatives(term)`` →
``[(index term, weight), ...]``. The router then treats the term and its
alternatives as **one structured-query slot** (Pirkola): they share the
term's weight, the best one present in an entry counts once, so a word with
six dictionary translations weighs no more than a word with one.

Sources, each at its own weight (chosen by leave-one-catalog-out
cross-validation, docs/retrieval.md):

- ``synonyms``: catalog-wide synonym sets curators maintain (any language);
- ``lexicon``: a pt↔en↔es dictionary (FreeDict, data/lexicon.tsv.gz,
  rebuilt by scripts/build_lexicon.py), English and Spanish words reaching
  the Portuguese terms of a catalog without curated translations, and back;
- ``cognates``: es↔pt spelling correspondences on stems (ción→ção, ñ→nh,
  ll→lh, …) and edit distance 2 on long stems, at a lower weight.

Pure Python; the lexicon is read once per process.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from common.text import analyze, fold, stem_many

LEXICON_PATH = Path(__file__).resolve().parent / "data" / "lexicon.tsv.gz"
COGNATE_MIN_LENGTH = 5
MAX_ALTERNATIVES = 6

# Spanish → Portuguese spelling correspondences, applied to folded words (both ways by reversing).
_ES_PT = (
    ("cion", "cao"),
    ("ciones", "coes"),
    ("sion", "sao"),
    ("dad", "dade"),
    ("ñ", "nh"),
    ("ll", "lh"),
    ("ue", "o"),
    ("ie", "e"),
    ("z", "c"),
    ("j", "lh"),
    ("b", "v"),
    ("v", "b"),
)

_lock = threading.Lock()
_lexicon_cache: dict[str, dict[str, tuple[str, ...]]] = {}


def load_lexicon(target: str = "pt", path: Path = LEXICON_PATH) -> dict[str, tuple[str, ...]]:
    """Analyzed term of another language → analyzed ``target``-language translations, once per process.

    One direction only, into the catalog's language: a Portuguese question on
    a Portuguese catalog has nothing to translate, and translating its words
    anyway turns the out-of-domain evidence of an unknown word ("jejum",
    "geladeira") into a weak match. Single-word entries only (a query term is
    one word).
    """
    key = f"{target}:{path}"
    cached = _lexicon_cache.get(key)
    if cached is not None:
        return cached
    with _lock:
        cached = _lexicon_cache.get(key)
        if cached is not None:
            return cached
        table: dict[str, dict[str, None]] = {}
        raw: dict[tuple[str, str], list[str]] = {}
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                lang, word, targets = line.rstrip("\n").split("\t")
                raw[(lang, word)] = targets.split("|")
        # Every word once through the stemmers in one batch per language (what ``analyze`` reads back).
        stem_many(
            [word.lower() for _, word in raw]
            + [t.split(":", 1)[-1].lower() for targets in raw.values() for t in targets]
        )
        for (lang, word), targets in raw.items():
            if lang == target:
                continue
            src = analyze(word)
            if len(src) != 1:
                continue
            row = table.setdefault(src[0], {})
            direct = [t.split(":", 1) for t in targets]
            direct = [(dl, dw) for dl, dw in direct if dl == target] or [
                # A thin pair (es→pt): pivot through the third language when it has nothing.
                tuple(t.split(":", 1))
                for dl, dw in direct
                for t in raw.get((dl, dw), ())
                if t.startswith(target + ":")
            ][:4]
            for _, word_to in direct:
                dst = analyze(word_to)
                if len(dst) == 1 and dst[0] != src[0]:
                    row.setdefault(dst[0], None)
        result = {k: tuple(v) for k, v in table.items() if v}
        _lexicon_cache[key] = result
        return result


def _edit_distance_at_most(a: str, b: str, limit: int) -> bool:
    if abs(len(a) - len(b)) > limit:
        return False
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


class QueryExpander:
    """Alternatives for a query term against one index vocabulary."""

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        *,
        lexicon: Mapping[str, Sequence[str]] | None = None,
        synonyms: Iterable[Iterable[str]] = (),
        lexicon_weight: float = 0.0,
        cognate_weight: float = 0.0,
        synonym_weight: float = 0.0,
    ):
        self.vocabulary = vocabulary
        self.lexicon = lexicon or {}
        self.lexicon_weight = lexicon_weight
        self.cognate_weight = cognate_weight
        self.synonym_weight = synonym_weight
        # Curator synonym sets: every analyzed member → the others (each a single term or a phrase's terms).
        self.synonyms: dict[str, set[str]] = {}
        for group in synonyms:
            terms = {t for phrase in group for t in analyze(phrase)}
            for t in terms:
                self.synonyms.setdefault(t, set()).update(terms - {t})
        self._buckets: dict[str, list[str]] | None = None

    @property
    def active(self) -> bool:
        return bool(
            (self.lexicon and self.lexicon_weight > 0)
            or self.cognate_weight > 0
            or (self.synonyms and self.synonym_weight > 0)
        )

    def synonym_alternatives(self, term: str) -> list[tuple[str, float]]:
        """Curated synonyms of a term (known or not) present in the index."""
        if self.synonym_weight <= 0:
            return []
        found = sorted(t for t in self.synonyms.get(term, ()) if t in self.vocabulary)
        return [(t, self.synonym_weight) for t in found[:MAX_ALTERNATIVES]]

    def unknown_alternatives(self, term: str, source: str) -> list[tuple[str, float]]:
        """For a term the index does not hold: its translations ("lexicon") or cognates ("cognates") it holds."""
        if source == "lexicon" and self.lexicon_weight > 0:
            translated = [t for t in self.lexicon.get(term, ()) if t in self.vocabulary]
            if translated:
                # The most common translations first: a dictionary lists rare senses too.
                translated.sort(key=lambda t: (-self.vocabulary[t], t))
                return [(t, self.lexicon_weight) for t in translated[:MAX_ALTERNATIVES]]
        if source == "cognates" and self.cognate_weight > 0:
            return [(t, self.cognate_weight) for t in self.cognates(term)]
        return []

    def cognates(self, term: str) -> list[str]:
        if len(term) < COGNATE_MIN_LENGTH or not term.isalpha():
            return []
        if self._buckets is None:
            buckets: dict[str, list[str]] = {}
            for t in self.vocabulary:
                if len(t) >= COGNATE_MIN_LENGTH - 1 and t.isalpha():
                    buckets.setdefault(t[:2], []).append(t)
            self._buckets = buckets
        variants = {fold(term)}
        for es, pt in _ES_PT:
            for v in list(variants):
                if es in v:
                    variants.add(v.replace(es, pt))
                if pt in v:
                    variants.add(v.replace(pt, es))
        exact = sorted(v for v in variants if v != term and v in self.vocabulary)
        if exact:
            return exact[:2]
        found = [
            t
            for t in self._buckets.get(term[:2], ())
            if abs(len(t) - len(term)) <= 2 and _edit_distance_at_most(term, t, 2)
        ]
        found.sort(key=lambda t: (-self.vocabulary[t], t))
        return found[:2]
