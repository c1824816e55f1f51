"""The router's signals for one part of a message, each a ranking with its reasons.

``route_part`` runs them in order: context hits (named ID, semantic focus,
parents, page), then either the cascade (BM25 among the context hits only, when
they already cover every content term) or keywords and BM25+ over the whole
catalog, then fetch feedback, then wiki-link neighbours of the strong hits, and
fuses the rankings (``fusion.weighted_rrf``). Every signal writes its reason
into ``why``, which is what the API and the admin's retrieval test show.

A reason is a plain tuple ``(signal, rank, detail)`` (``part`` appended when a
message has several parts). ``detail`` is the text, or ``(format, *args)``
when building the text costs something (numbers, matched terms): it is
formatted by ``note_as_dict`` only for the entries that are shown, so a
route does not format reasons for the ~50 entries nobody reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from common.identifiers import focus_ancestors, normalize_package_key, semantic_id_parents
from common.text import analyze, code_term, tokens

from . import rerank
from .entries import KIND_PROCEDURE
from .fusion import rrf_steps, weighted_rrf

if TYPE_CHECKING:
    from .index import RouterIndex


@dataclass
class Slot:
    """One content term of the question (or its typo corrections)."""

    terms: list[str]  # index terms that count for this slot
    weight: float  # query weight of each term (1, or typo_weight)
    denom: float  # IDF this slot weighs in the coverage denominator
    label: str  # what the user typed (for `why`)
    # Per-term weights when the slot holds expansions (translations, synonyms) at their own weight.
    term_weights: dict[str, float] | None = None
    # (BM25 index, its valued terms): what ``valued_terms`` worked out last (slots are cached per index).
    valued_for: tuple[Any, list[tuple[str, float]]] | None = field(default=None, repr=False, compare=False)

    def weight_of(self, term: str) -> float:
        return self.term_weights.get(term, self.weight) if self.term_weights else self.weight

    def valued_terms(self, bm25) -> list[tuple[str, float]]:
        """The terms worth something in coverage, with their value (query weight × IDF > 0), for ``bm25``.

        Remembered for the last index asked (a slot is cached per index, ``query_slots``); a slot is
        never mutated once made, so the list stays right for that index.
        """
        known = self.valued_for
        if known is not None and known[0] is bm25:
            return known[1]
        idf = bm25.idf
        valued = [(t, value) for t in self.terms if (value := self.weight_of(t) * idf(t)) > 0]
        self.valued_for = (bm25, valued)
        return valued


# (signal, rank, detail[, part]); detail: str, or (format function, *args) formatted when shown.
Note = tuple


def note_as_dict(note: Note) -> dict[str, Any]:
    """A reason as the API and the admin show it: {"signal", "rank", "detail"[, "part"]}."""
    detail = note[2]
    out = {"signal": note[0], "rank": note[1], "detail": detail if detail.__class__ is str else detail[0](*detail[1:])}
    if len(note) > 3:
        out["part"] = note[3]
    return out


@dataclass(frozen=True)
class Agreement:
    """A part's dense top (never a procedure): its lift over the catalog's mean cosine, its best rank by
    BM25 or keywords (0: found by neither) and, in a message of one part, the cosine of its closest
    accepted example question with the question (None: not measured, or it has none)."""

    entry: int
    lift: float
    lexical_rank: int
    closest_example: float | None = None


@dataclass
class PartOutcome:
    text: str
    key: str
    cascade: bool
    fused: dict[int, float]
    eligible: set[int]
    why: dict[int, list[Note]]
    bm25_ms: float
    base_ranking: list[str] = field(default_factory=list)
    features: dict[int, np.ndarray] = field(default_factory=dict)
    # Entries fetch feedback promoted (the only signal that writes a "feedback" reason).
    promoted: frozenset[int] = frozenset()
    # The entry words and meaning agree on (_agreement): a full body when it is the part's best and
    # clears the lift and lexical rank of its message's kind (shaping._agreed_full).
    agreement: Agreement | None = None
    # Every entry's cosine with the part (−1 without a vector), when the part was embedded: what
    # breaks a tie of fused scores in shaping (the entry closer in meaning first).
    meaning: np.ndarray | None = None
    # The part's sentence vector when it was embedded (what ``meaning`` was computed from).
    vector: np.ndarray | None = None


# How many of a part's best entries (before feedback) describe what it is about.
BASE_RANKING_DEPTH = 5


@dataclass(frozen=True)
class PartQuery:
    """What ``related_feedback`` is told about a part: its feedback key, its text as the router
    read it, and its sentence vector when the dense signal already embedded it (None when the
    gate found the words enough, the cascade answered, or the model is off)."""

    key: str
    text: str
    vector: np.ndarray | None = None


@dataclass
class _Signals:
    """The rankings of one part as they are collected, with their reasons and the full-body candidates."""

    rankings: dict[str, list[int]] = field(default_factory=dict)
    why: dict[int, list[Note]] = field(default_factory=dict)
    eligible: set[int] = field(default_factory=set)
    # Read by the re-ranker's features only: each BM25 hit's score relative to the part's best,
    # and the question's cosine with every entry plus the catalog mean (None: not embedded).
    bm25_relative: dict[int, float] = field(default_factory=dict)
    # Coverage of each BM25 hit kept (the dense gate reads the best one's).
    bm25_coverage: dict[int, float] = field(default_factory=dict)
    # Lexical hits below the full-body threshold, per signal, as (rank, entry) (damped in fusion by
    # ``weak_lexical_factor``); also the strong hits the meaning check vetoed (``vetoed_weak_lift``).
    weak: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    dense_sims: tuple[np.ndarray, float] | None = None
    # The dense top entry's lift over the catalog's mean cosine (None: the part was not embedded).
    dense_top_lift: float | None = None
    vector: np.ndarray | None = None  # the part's sentence vector, when the dense signal embedded it

    def note(self, i: int, signal: str, rank: int, detail: str | tuple) -> None:
        """A reason for entry ``i``; ``detail`` is text or ``(format, *args)`` (see ``note_as_dict``)."""
        notes = self.why.get(i)
        if notes is None:
            self.why[i] = [(signal, rank, detail)]
        else:
            notes.append((signal, rank, detail))


# ------------------------------------------------------------ the question's terms


def _expanded_slot(index: RouterIndex, term: str, alternatives: list[tuple[str, float]]) -> Slot:
    """Structured query: the alternatives of one term share its weight (the best one present counts)."""
    weights = dict(alternatives)
    return Slot(list(weights), max(weights.values()), max(index.bm25.idf(t) for t in weights), term, weights)


def _term_slot(index: RouterIndex, term: str) -> Slot:
    """A known term (with its curated synonyms), else translations, typo corrections, cognates, or unknown."""
    bm25, expander = index.bm25, index.expander
    if term in bm25.vocabulary:
        synonyms = [(t, w) for t, w in (expander.synonym_alternatives(term) if expander else []) if t != term]
        if synonyms:
            return Slot([term, *dict(synonyms)], 1.0, bm25.idf(term), term, {**dict(synonyms), term: 1.0})
        return Slot([term], 1.0, bm25.idf(term), term)
    alternatives = []
    if expander:
        alternatives = expander.synonym_alternatives(term) or expander.unknown_alternatives(term, "lexicon")
    if alternatives:
        return _expanded_slot(index, term, alternatives)
    fixes = index.typos.expand(term)
    if fixes:
        return Slot(fixes, index.config.typo_weight, max(bm25.idf(f) for f in fixes), term)
    cognates = expander.unknown_alternatives(term, "cognates") if expander else []
    if cognates:
        return _expanded_slot(index, term, cognates)
    return Slot([], 0.0, index.config.unknown_term_weight * bm25.max_idf, term)


# Distinct query terms whose slot an index remembers (unknown words and typos included: bounded).
_SLOT_CACHE_MAX = 50_000


def query_slots(index: RouterIndex, text: str, terms: list[str] | None = None) -> list[Slot]:
    """One slot per distinct term of the text (``terms``: ``analyze(text)`` when the caller has it);
    a term's slot is worked out once per index (slots are not mutated)."""
    cache = index.__dict__.get("_slots_by_term")
    if cache is None:
        cache = index.__dict__.setdefault("_slots_by_term", {})
    slots = []
    for term in dict.fromkeys(analyze(text) if terms is None else terms):
        slot = cache.get(term)
        if slot is None:
            slot = _term_slot(index, term)
            if len(cache) < _SLOT_CACHE_MAX:
                cache[term] = slot
        slots.append(slot)
    return slots


def slots_key(slots: Sequence[Slot]) -> str:
    """A part's feedback key: its terms as the index reads them (translations and corrections included)."""
    return " ".join(sorted({t for s in slots for t in (s.terms or [s.label])}))


def part_key(index: RouterIndex, text: str) -> str:
    return slots_key(query_slots(index, text))


def query_weights(slots: Sequence[Slot]) -> dict[str, float]:
    weights: dict[str, float] = {}
    for slot in slots:
        for t in slot.terms:
            weights[t] = weights.get(t, 0.0) + slot.weight_of(t)
    return weights


class MatchedTerms:
    """Which of the question's terms each document of a coverage pass holds; ``matched[j]`` lists them.

    Kept as one boolean row per slot (stacked into a matrix only when asked) and listed only for
    the reasons that are shown (all columns at once, on the first reason formatted). Plain data:
    it pickles as labels + matrix.
    """

    __slots__ = ("labels", "_hits", "_rows", "_n", "_columns")

    def __init__(
        self, labels: tuple[str, ...], hits: np.ndarray | None, rows: list[np.ndarray] | None = None, n: int = 0
    ):
        self.labels = labels
        self._hits = hits  # bool, slots × documents (None: stacked from ``rows`` when asked)
        self._rows = rows
        self._n = n
        self._columns: list[list[bool]] | None = None

    @property
    def hits(self) -> np.ndarray:
        if self._hits is None:
            self._hits = np.vstack(self._rows) if self._rows else np.zeros((0, self._n), dtype=bool)
        return self._hits

    def __getitem__(self, j: int) -> list[str]:
        columns = self._columns
        if columns is None:
            columns = self._columns = self.hits.T.tolist()
        return [label for label, hit in zip(self.labels, columns[j]) if hit]

    def __len__(self) -> int:
        return self.hits.shape[1]

    def __getstate__(self):
        return self.labels, self.hits

    def __setstate__(self, state) -> None:
        self.labels, self._hits = state
        self._rows = self._columns = None
        self._n = 0


def coverage(index: RouterIndex, slots: Sequence[Slot], docs: np.ndarray) -> tuple[np.ndarray, MatchedTerms]:
    """Share of the question's IDF each doc holds, and the terms it holds."""
    total = sum(s.denom for s in slots) or 1.0
    n = len(docs)
    covered = np.zeros(n)
    labels: list[str] = []
    rows: list[np.ndarray] = []
    if n == 0:
        return covered, MatchedTerms((), np.zeros((0, 0), dtype=bool))
    docs = np.asarray(docs, dtype=np.int64)
    bm25 = index.bm25
    for slot in slots:
        best = None
        for t in slot.terms:
            value = slot.weight_of(t) * bm25.idf(t)
            if value > 0:
                # The best value of the slot's terms each doc holds (value > 0: a max is exact).
                hit = bm25.contains(t, docs) * value
                best = hit if best is None else np.maximum(best, hit)
        if best is None:
            continue
        labels.append(slot.label)
        rows.append(best > 0)
        covered += np.minimum(best, slot.denom)
    hits = np.vstack(rows) if rows else np.zeros((0, n), dtype=bool)
    return covered / total, MatchedTerms(tuple(labels), hits)


def _candidate_coverage(index: RouterIndex, slots: Sequence[Slot], docs: list[int]) -> tuple[list[float], MatchedTerms]:
    """``coverage`` of a hit list, each term's hits read from its cached document row: the same numbers.

    A term without a row (past the rows' memory budget) is looked up as ``coverage`` does
    (``contains``): both give the same booleans. A one-term slot adds ``min(value, denom)``
    where the term is held and 0.0 elsewhere, which is ``np.minimum(hit * value, denom)`` for
    ``denom ≥ 0`` (always: an IDF); other slots take the general pass. Sums are added in slot
    order, then divided by the same total.
    """
    total = sum(s.denom for s in slots) or 1.0
    n = len(docs)
    if n == 0:
        return [], MatchedTerms((), np.zeros((0, 0), dtype=bool))
    bm25 = index.bm25
    doc_row = bm25.doc_row
    at = np.asarray(docs, dtype=np.int64)

    def held_by(term: str) -> np.ndarray:
        row = doc_row(term)
        return row[at] if row is not None else bm25.contains(term, at)

    covered = np.zeros(n)
    labels: list[str] = []
    rows: list[np.ndarray] = []
    for slot in slots:
        valued = slot.valued_terms(bm25)
        if not valued:
            continue
        labels.append(slot.label)
        denom = slot.denom
        if len(valued) == 1 and denom >= 0:
            value = valued[0][1]
            held = held_by(valued[0][0])
            rows.append(held)
            covered += held * (value if value < denom else denom)
            continue
        best = None
        for t, value in valued:
            hit = held_by(t) * value
            best = hit if best is None else np.maximum(best, hit)
        rows.append(best > 0)
        covered += np.minimum(best, denom)
    return (covered / total).tolist(), MatchedTerms(tuple(labels), None, rows, n)


def bm25_floor(index: RouterIndex, query: Mapping[str, float]) -> float:
    """The BM25+ score every document gets for these terms (the delta part): not evidence."""
    delta, idf = index.bm25.delta, index.bm25.idf
    return sum(delta * idf(t) * w for t, w in query.items())


# ------------------------------------------------------------------- lookups

# Up to this many (keyword, entry) pairs, keyword scores are summed in plain Python.
_SMALL_KEYWORD_HITS = 256
# A matched keyword carried by at most this many entries keeps them as Python ints too.
_KEYWORD_MEMBERS_MAX = 256


def named_ids(index: RouterIndex, text: str) -> list[int]:
    """Entries whose ID or alias appears as a token of the text.

    Only tokens written like identifiers count (with "_" or in capitals,
    or after "::"), so the word "preços" in a sentence does not "name"
    the alias PRECOS; it still matches through BM25 on the alias field.
    """
    found: list[int] = []
    qualified = "::" in text  # an ID after "::" counts whatever its case
    for raw in tokens(text):
        if not ("_" in raw or (len(raw) >= 3 and raw.isupper()) or (qualified and f"::{raw}" in text)):
            continue
        i = index.id_keys.get(normalize_package_key(raw))
        if i is not None and i not in found:
            found.append(i)
    return found


def semantic_hits(
    index: RouterIndex, focus: str | None, parents: Sequence[str] = (), page: str | None = None
) -> tuple[list[int], list[tuple[int, str]], list[tuple[int, str]]]:
    """Entries documenting the focus (exact), then its parents, then the page; each entry once."""
    exact: list[int] = list(index.semantic.get(focus.lower(), ())) if focus else []
    seen = set(exact)
    parent_hits: list[tuple[int, str]] = []
    for pid in focus_ancestors(focus, parents):
        for i in index.semantic.get(pid.lower(), ()):
            if i not in seen:
                parent_hits.append((i, pid))
                seen.add(i)
    page_hits: list[tuple[int, str]] = []
    for pid in [page, *semantic_id_parents(page)] if page else ():
        for i in index.semantic.get(pid.lower(), ()):
            if i not in seen:
                page_hits.append((i, page))
                seen.add(i)
    return exact, parent_hits, page_hits


@dataclass(frozen=True, slots=True)
class _Keyword:
    """One matched keyword as the hot path reads it (worked out once per index, when first matched)."""

    id: int
    weight: float  # Σ idf of its terms
    carriers: np.ndarray  # entries carrying it (int64, sorted)
    size: int  # how many
    # The same entries as Python ints when at most _KEYWORD_MEMBERS_MAX (the plain-Python sum reads them).
    members: tuple[int, ...] | None


def _matched_keywords(index: RouterIndex, present: set[str]) -> list[_Keyword]:
    """Keywords whose every term is present, in the order their scores are summed: by the term
    they are reached from (its rarest, in ``present``'s order), then as filed under it."""
    cache = index.__dict__.get("_keywords_matched")
    if cache is None:
        cache = index.__dict__.setdefault("_keywords_matched", {})
    by_rarest = index.keywords_by_rarest
    covers = present.issuperset  # one C call per keyword a question term heads
    matched: list[_Keyword] = []
    for term in present:
        for terms in by_rarest.get(term, ()):
            if covers(terms):
                kw = cache.get(terms)
                if kw is None:
                    idf = index.bm25.idf
                    carriers = index.keyword_entries[terms]
                    kw = cache[terms] = _Keyword(
                        index.keyword_ids[terms],
                        sum(idf(t) for t in terms),
                        carriers,
                        carriers.size,
                        tuple(carriers.tolist()) if carriers.size <= _KEYWORD_MEMBERS_MAX else None,
                    )
                matched.append(kw)
    return matched


def keyword_hits(
    index: RouterIndex, slots: Sequence[Slot], limit: int | None = None
) -> tuple[list[tuple[int, float]], frozenset[int]]:
    """Entries with a curated keyword whose every term is in the question, best first, and the matched keyword ids.

    Which of an entry's keywords matched (for ``why``) is ``matched_keywords``:
    only worked out for the entries that are shown.
    """
    present: set[str] = set()
    for s in slots:
        present.update(s.terms)
    matched = _matched_keywords(index, present)
    if not matched:
        return [], frozenset()
    limit = limit or index.config.bm25_top_k
    # Best first, ties by position: deterministic, whichever path sums the scores.
    pairs = sum(kw.size for kw in matched)
    if pairs <= _SMALL_KEYWORD_HITS and pairs <= _KEYWORD_MEMBERS_MAX:
        # Few carriers: plain Python beats a dozen numpy calls (same sums, added in the same order).
        summed: dict[int, float] = {}
        get = summed.get
        for kw in matched:
            w = kw.weight
            for i in kw.members:
                summed[i] = get(i, 0.0) + w
        # (-score, position) without a tuple per entry: positions sorted, then stably by score.
        order = sorted(sorted(summed), key=summed.__getitem__, reverse=True)[:limit]
        best = [(i, summed[i]) for i in order]
    else:
        carriers = [kw.carriers for kw in matched]
        docs = np.concatenate(carriers)
        hits, inverse = np.unique(docs, return_inverse=True)
        scores = np.bincount(inverse, weights=np.repeat([kw.weight for kw in matched], [c.size for c in carriers]))
        order = np.lexsort((hits, -scores))[:limit]
        best = list(zip(hits[order].tolist(), scores[order].tolist()))
    return best, frozenset(kw.id for kw in matched)


def matched_keywords(entry_keywords: Sequence[tuple[int, str]], matched: frozenset[int]) -> list[str]:
    """An entry's keywords (as written) among the matched ones (``RouterIndex.entry_keywords[i]``)."""
    return [kw for kw_id, kw in entry_keywords if kw_id in matched]


def _keyword_detail(entry_keywords, matched: frozenset[int], cov: float, strong: bool) -> str:
    return ", ".join(matched_keywords(entry_keywords, matched)) + (
        "" if strong else f" (coverage {cov:.2f}: listed only)"
    )


def _linked_detail(package_id: str) -> str:
    return f"linked with {package_id}"


def _bm25_detail(score: float, cov: float, matched: MatchedTerms, j: int, strong: bool) -> str:
    return f"score {score:.2f}, coverage {cov:.2f} ({' '.join(matched[j])})" + (
        "" if strong else ", below the full threshold"
    )


# ------------------------------------------------------------------- signals


def _context_signals(index: RouterIndex, signals: _Signals, named: list[int], focus, parents, page) -> list[int]:
    """ID, semantic, parent and page hits; returns the context hits in that order (each once)."""
    if not (named or focus or parents or page):
        return []  # no ID named, no UI context (most questions): every list below would be empty
    exact, parent_hits, page_hits = semantic_hits(index, focus, parents, page)
    # Each signal: its hits with the detail `why` shows, and whether they may arrive in full.
    # Parents and the page are context for the focus: full bodies only when nothing closer matched.
    for name, hits, full in (
        ("id", [(i, f"{index.entries[i].package_id} named in the message") for i in named], True),
        ("semantic", [(i, f"exact: {focus}") for i in exact], True),
        ("semantic_parent", [(i, f"parent: {pid}") for i, pid in parent_hits], not exact),
        ("semantic_page", [(i, f"page: {pid}") for i, pid in page_hits], not (exact or parent_hits)),
    ):
        if not hits:
            continue
        signals.rankings[name] = [i for i, _ in hits]
        for r, (i, detail) in enumerate(hits, 1):
            signals.note(i, name, r, detail)
            if full:
                signals.eligible.add(i)
    return list(dict.fromkeys([*named, *exact, *(i for i, _ in parent_hits), *(i for i, _ in page_hits)]))


def _cascade_signal(index: RouterIndex, signals: _Signals, content: list[Slot], context: list[int], query) -> bool:
    """BM25 among the context hits alone when they hold every content term; False when the corpus is needed."""
    if not context:
        return False
    pool = np.asarray(context, dtype=np.int64)
    # Union coverage: does some context hit hold each content term?
    if any(not any(index.bm25.contains(t, pool).any() for t in s.terms) for s in content):
        return False
    if query:
        covered, _ = coverage(index, content, pool) if content else (np.ones(len(pool)), [])
        scores = index.bm25.scores(query, candidates=pool)
        order = sorted(range(len(pool)), key=lambda j: (-scores[j], j))
        ranked = [int(pool[j]) for j in order if covered[j] > 0]
        if ranked:
            signals.rankings["bm25"] = ranked
            for r, i in enumerate(ranked, 1):
                signals.note(i, "bm25", r, "scored among context hits only (cascade)")
    return True


def _corpus_signals(index: RouterIndex, signals: _Signals, content: list[Slot], query: Mapping[str, float]) -> None:
    """Keywords, then BM25+ over the whole catalog; one coverage pass serves both."""
    kw_hits, kw_matched = keyword_hits(index, content)
    hits = index.bm25.top_k(query, index.config.bm25_top_k) if query else []
    if not kw_hits and not hits:
        return
    docs = [i for i, _ in kw_hits] + [i for i, _ in hits]
    # Coverage is per document: computing it once over both lists gives each the same values.
    covered, matched = _candidate_coverage(index, content, docs)
    n_kw = len(kw_hits)
    if kw_hits:
        _keyword_signal(index, signals, kw_hits, kw_matched, covered[:n_kw])
    if hits:
        _bm25_signal(index, signals, hits, covered, matched, n_kw, query)


def _questions_signal(index: RouterIndex, signals: _Signals, content: list[Slot], query: Mapping[str, float]) -> None:
    """The entries whose accepted example questions' words score best (``questions.QuestionsIndex``).

    Rank only: never eligible for a full body, never counted in coverage. Messages of one part only
    (``route_part``'s ``several``): measured on every part, it moved a part's best away from the
    entry its meaning pointed at and cost multi-part messages their bodies (docs/retrieval.md).
    """
    questions = index.questions
    if questions is None:
        return
    cfg = index.config
    if cfg.questions_typed_terms:
        # The words as typed count too: one the catalog's text never uses (or only translated) may be
        # in its example questions, which are written in every language.
        typed = {s.label: 1.0 for s in content if s.label not in s.terms and s.label in questions.postings}
        if typed:
            query = {**query, **typed}
    if not query:
        return
    entries = index.entries
    ranked = questions.top(query, cfg.questions_top_k, cfg.questions_share, lambda i: entries[i].package_id)
    if not ranked:
        return
    signals.rankings["questions"] = [i for i, _ in ranked]
    for r, (i, score) in enumerate(ranked, 1):
        signals.note(
            i, "questions", r, f"its accepted example questions share the question's words (BM25+ {score:.2f})"
        )


def _keyword_signal(index: RouterIndex, signals: _Signals, hits, matched, kw_coverage: list[float]) -> None:
    # A keyword alone is not an answer: the entry must also hold enough of the
    # question ("delivery time for a pizza").
    ranking = signals.rankings.setdefault("keyword", [])
    full_coverage = index.config.full_coverage
    entry_keywords = index.entry_keywords
    eligible, why = signals.eligible, signals.why
    why_get = why.get
    weak: list[tuple[int, int]] = []
    for r, ((i, _score), cov) in enumerate(zip(hits, kw_coverage), 1):
        ranking.append(i)
        strong = cov >= full_coverage
        # signals.note, inlined (one call less per hit).
        note = ("keyword", r, (_keyword_detail, entry_keywords[i], matched, cov, strong))
        notes = why_get(i)
        if notes is None:
            why[i] = [note]
        else:
            notes.append(note)
        if strong:
            eligible.add(i)
        else:
            weak.append((r, i))
    if weak:
        signals.weak["keyword"] = weak


def _bm25_signal(
    index: RouterIndex, signals: _Signals, hits, covered: list[float], matched: MatchedTerms, offset: int, query
) -> None:
    """BM25 hits kept by coverage; ``covered[offset + j]`` and ``matched[offset + j]`` belong to ``hits[j]``."""
    cfg = index.config
    floor = bm25_floor(index, query)
    best = hits[0][1] - floor
    listed_coverage, full_coverage, full_relative = cfg.listed_coverage, cfg.full_coverage, cfg.full_relative_score
    eligible, why, relative, coverages = signals.eligible, signals.why, signals.bm25_relative, signals.bm25_coverage
    why_get = why.get
    ranked: list[int] = []
    weak: list[tuple[int, int]] = []
    for j, (i, score) in enumerate(hits, start=offset):
        cov = covered[j]
        if cov < listed_coverage:
            continue
        ranked.append(i)
        rel = (score - floor) / best if best > 0 else 0.0
        relative[i] = rel
        coverages[i] = cov
        strong = cov >= full_coverage and rel >= full_relative
        # signals.note, inlined (one call less per hit).
        note = ("bm25", len(ranked), (_bm25_detail, score, cov, matched, j, strong))
        notes = why_get(i)
        if notes is None:
            why[i] = [note]
        else:
            notes.append(note)
        if strong:
            eligible.add(i)
        else:
            weak.append((len(ranked), i))
    if weak:
        signals.weak["bm25"] = weak
    if ranked:
        signals.rankings["bm25"] = ranked


def _lexically_answered(index: RouterIndex, signals: _Signals) -> bool:
    """Keywords and BM25 agree on an entry they both find strong: the question needs no embedding."""
    gate = index.config.dense_gate
    if gate == "always":
        return False
    top_kw = signals.rankings.get("keyword", [None])[0]
    top_bm25 = signals.rankings.get("bm25", [None])[0]
    if gate == "agreement":
        return top_bm25 is not None and top_bm25 == top_kw and top_bm25 in signals.eligible
    if gate == "covered":
        # Strong and holding most of the question: a lexical match on a few common words
        # ("caixa", "casa" of "a mudança da casa inteira") is checked against the meaning.
        return (
            top_bm25 is not None
            and top_bm25 in signals.eligible
            and signals.bm25_coverage.get(top_bm25, 0.0) >= index.config.dense_gate_coverage
        )
    return top_bm25 is not None and top_bm25 in signals.eligible  # "bm25_strong"


def _dense_signal(index: RouterIndex, signals: _Signals, text: str, several: bool = False) -> None:
    """Entries whose vector is closest to the question's (paraphrases, typos, other languages).

    Also the meaning check of the lexical full bodies (``dense_veto_lift``): an entry made eligible
    by keywords or BM25 alone whose vector the question's does not come near (outside the dense
    top ``dense_veto_rank`` and lift below ``dense_veto_lift``) is listed, not given in full.
    """
    cfg = index.config
    dense = index.dense
    if dense is None or not cfg.weights.get("dense") or not text.strip() or _lexically_answered(index, signals):
        return
    vector = signals.vector = dense.query_vector(text)
    if vector is None:
        return
    # Every entry's cosine once: the top k, the catalog mean and the meaning check all read them.
    sims = dense.similarities(vector, cfg.dense_closest_example_share)
    ranked, mean = dense.top_of(sims, cfg.dense_top_k)
    signals.dense_sims = (sims, mean)  # the meaning check, the re-ranker's features, shaping's ties
    if cfg.dense_veto_lift < 2.0 and signals.eligible:
        top_lift = ranked[0][1] - mean if ranked else 0.0
        _dense_veto(index, signals, sims, mean, several, top_lift)
    hits = [(i, sim) for i, sim in ranked if sim - mean >= cfg.dense_floor]
    if not hits:
        return
    signals.rankings["dense"] = [i for i, _ in hits]
    for r, (i, sim) in enumerate(hits, 1):
        signals.note(i, "dense", r, f"similarity {sim:.3f} (catalog mean {mean:.3f})")
    top, sim = hits[0]
    signals.dense_top_lift = sim - mean
    # A clear lead over the runner-up: the question means this entry and no other. Ranked once
    # more, so that words matching another entry (a paraphrase's common words) do not outvote it.
    # Off (weight 0) it is not noted either: ``why`` names only what can change the order.
    margin = sim - ranked[1][1] if len(ranked) > 1 else 0.0
    if margin >= cfg.dense_margin and cfg.weights.get("dense_margin"):
        signals.rankings["dense_margin"] = [top]
        signals.note(top, "dense_margin", 1, f"closer than any other entry by {margin:.3f}")
    full_lift = cfg.dense_full_lift_examples if dense.has_examples(top) else cfg.dense_full_lift
    if sim - mean >= full_lift and index.entries[top].kind != KIND_PROCEDURE:
        signals.eligible.add(top)


def _damp_weak(cfg, signals: _Signals, fused: dict[int, float]) -> None:
    """A lexical hit below the full-body threshold (or vetoed by the meaning check, ``vetoed_weak_lift``)
    counts ``weak_lexical_factor`` of its rank's share."""
    k = cfg.rrf_k
    for name, weak in signals.weak.items():
        cut = (1.0 - cfg.weak_lexical_factor) * cfg.weights.get(name, 0.0)
        if cut:
            for rank, i in weak:
                fused[i] -= cut / (k + rank)


def _agreement(index: RouterIndex, signals: _Signals, several: bool) -> Agreement | None:
    """The part's dense top, with what shaping needs to judge whether words and meaning agree on it.

    Shaping gives it a full body when it is also the part's best and clears the lift and lexical rank
    set for its message's kind (``multipart_*`` with several parts, ``agreed_*`` with one;
    shaping._agreed_full): a part of a longer message is short, and a paraphrase shares few of its
    entry's words, so neither reaches the coverage a full body otherwise needs even when every signal
    points at one entry.
    """
    cfg = index.config
    lift = signals.dense_top_lift
    floor = cfg.multipart_full_lift if several else min(cfg.agreed_full_lift, cfg.agreed_example_lift)
    if lift is None or lift < floor:
        return None
    top = signals.rankings["dense"][0]
    if index.entries[top].kind == KIND_PROCEDURE:
        return None
    ranks = [
        r.index(top) + 1 for r in (signals.rankings.get("bm25", ()), signals.rankings.get("keyword", ())) if top in r
    ]
    closest = None
    if not several and cfg.agreed_example_cosine <= 1.0 and lift >= cfg.agreed_example_lift:
        closest = index.dense.closest_example(signals.vector, top)
    return Agreement(top, lift, min(ranks, default=0), closest)


# The signals whose strong hits the meaning check can veto, and whose share a vetoed hit loses.
LEXICAL_SIGNALS = ("keyword", "bm25")
# Signals whose full-body eligibility the dense meaning check never takes away: the context ones
# (rerank.CONTEXT_SIGNALS, one definition for both).
CONTEXT_SIGNALS = rerank.CONTEXT_SIGNALS


def _dense_veto(
    index: RouterIndex, signals: _Signals, sims: np.ndarray, mean: float, several: bool, top_lift: float
) -> None:
    """The meaning check of the part's lexical full bodies (``dense_veto_lift`` / ``dense_veto_rank``; a
    message of one part: ``dense_veto_lift_one_part`` / ``dense_veto_rank_one_part``). Entries an ID or
    the UI context holds, entries without a vector, and (in a one-part message, unless
    ``dense_veto_coverage_several``) entries whose BM25 match holds ``dense_veto_coverage`` of the
    question are left out of it; fetch feedback, applied after, makes its entries eligible again."""
    cfg = index.config
    present = index.dense.present
    max_lift, max_rank = cfg.dense_veto_lift, cfg.dense_veto_rank
    if not several:
        if cfg.dense_veto_lift_one_part is not None:
            max_lift = cfg.dense_veto_lift_one_part
        if cfg.dense_veto_rank_one_part is not None:
            max_rank = cfg.dense_veto_rank_one_part
    # A vetoed hit is damped as a weak one when the meaning points clearly at some entry.
    damp = top_lift >= cfg.vetoed_weak_lift
    keyword_held: set[int] = set()
    if not cfg.dense_veto_keywords:
        weak_keywords = {i for _, i in signals.weak.get("keyword", ())}
        keyword_held = {i for i in signals.rankings.get("keyword", ()) if i not in weak_keywords}
    covered = cfg.dense_veto_coverage if cfg.dense_veto_coverage_several or not several else 9.0
    coverage = signals.bm25_coverage
    for i in sorted(signals.eligible):
        # An entry without a vector has no meaning to check against.
        if not present[i] or i in keyword_held or any(n[0] in CONTEXT_SIGNALS for n in signals.why.get(i, ())):
            continue
        if coverage.get(i, 0.0) >= covered:
            continue  # the question's words are the entry's: they need no meaning to vouch for them
        lift = float(sims[i]) - mean
        rank = 1 + int((sims > sims[i]).sum())
        if lift < max_lift and rank > max_rank:
            signals.eligible.discard(i)
            signals.note(i, "dense_veto", rank, f"the question's meaning is far from it (lift {lift:.3f}): listed")
            if damp:
                # Words the question's meaning does not come near, while it points elsewhere: they count
                # as a weak match does.
                for name in LEXICAL_SIGNALS:
                    ranking = signals.rankings.get(name)
                    if ranking and i in ranking and all(j != i for _, j in signals.weak.get(name, ())):
                        signals.weak.setdefault(name, []).append((ranking.index(i) + 1, i))


def _feedback_signal(index: RouterIndex, signals: _Signals, feedback: Mapping[str, float]) -> None:
    """Fetch feedback for this question (computed by the caller, decayed)."""
    if not feedback:
        return
    promoted = [
        index.position[pid]
        for pid, w in sorted(feedback.items(), key=lambda kv: -kv[1])
        if w >= index.config.feedback_min_weight and pid in index.position
    ]
    if not promoted:
        return
    signals.rankings["feedback"] = promoted
    for r, i in enumerate(promoted, 1):
        weight = feedback[index.entries[i].package_id]
        signals.note(i, "feedback", r, f"fetched after being listed (weight {weight:.2f})")
        signals.eligible.add(i)


def _strongest(eligible: set[int], fused: Mapping[int, float], entries, n: int) -> list[int]:
    """``sorted(eligible, key=(-fused score, package ID))[:n]`` without a key tuple per entry: the
    entries sorted by score alone (a C-level key), and only those scoring at least the n-th best
    score sorted by the full key. Every entry of the true first n scores at least that much, so
    the n taken from them are the same."""
    get = fused.get
    if len(eligible) > n > 0:
        scores = {i: get(i, 0.0) for i in eligible}
        by_score = sorted(eligible, key=scores.__getitem__, reverse=True)
        cut = scores[by_score[n - 1]]
        eligible = [i for i in by_score if scores[i] >= cut]
    return sorted(eligible, key=lambda i: (-get(i, 0.0), entries[i].package_id))[:n]


def _wikilink_signal(index: RouterIndex, signals: _Signals, fused: dict[int, float]) -> dict[int, float]:
    """One hop of wiki links from the strong hits, damped by the source's rank; the fusion redone with them."""
    cfg = index.config
    # Ties broken by package ID, not by slot: a delta appends edited entries at new slots, so a
    # slot order would make the links of a delta's index differ from a fresh build's.
    entries = index.entries
    strong = _strongest(signals.eligible, fused, entries, cfg.max_full_per_part)
    neighbours: list[int] = []
    why = signals.why
    why_get, links_get = why.get, index.links.get
    for src in strong:
        for j in links_get(src, ()):
            if j not in neighbours and j not in strong:
                neighbours.append(j)
                # signals.note, inlined; the text is written when the reason is shown (note_as_dict).
                note = ("wikilink", len(neighbours), (_linked_detail, entries[src].package_id))
                notes = why_get(j)
                if notes is None:
                    why[j] = [note]
                else:
                    notes.append(note)
    if not neighbours:
        return fused
    signals.rankings["wikilink"] = neighbours
    # The fusion redone with the wiki links, which come last: each entry's sum gains its
    # wiki-link term last, exactly as weighted_rrf over every ranking would add it.
    weight, k = cfg.weights.get("wikilink", 0.0), cfg.rrf_k
    if weight:
        get = fused.get
        for j, step in zip(neighbours, rrf_steps(weight, k, len(neighbours))):
            fused[j] = get(j, 0.0) + step
    return fused


def _fuse(index: RouterIndex, signals: _Signals) -> dict[int, float]:
    """The part's rankings fused: weighted RRF, weak lexical hits damped (``weak_lexical_factor``)."""
    fused = weighted_rrf(signals.rankings, index.config.weights, index.config.rrf_k)
    if index.config.weak_lexical_factor != 1.0 and signals.weak:
        _damp_weak(index.config, signals, fused)
    return fused


def _base_ranking(index: RouterIndex, signals: _Signals) -> list[str]:
    # Fused as the route fuses (before feedback): a paraphrase's feedback is matched on the order it gets.
    base = _fuse(index, signals) if signals.rankings else {}
    return [index.entries[i].package_id for i in sorted(base, key=lambda i: (-base[i], i))[:BASE_RANKING_DEPTH]]


def _rerank_signal(index: RouterIndex, signals: _Signals, content: list[Slot], fused: dict[int, float]):
    """Candidate features (for training), and the learned re-ranker's order when it is configured."""
    cfg = index.config
    if not fused or (cfg.rerank_weights is None and not index.collect_features):
        return {}
    features = rerank.candidate_features(index, content, fused, signals, coverage)
    if cfg.rerank_weights is not None:
        rerank.rerank_part(
            fused,
            signals.eligible,
            signals.why,
            features,
            cfg.rerank_weights,
            cfg.rerank_full_probability,
            index.entries,
            veto_probability=cfg.rerank_veto_probability,
            reorder=cfg.rerank_reorder,
        )
    return features


def route_part(
    index: RouterIndex,
    text: str,
    *,
    focus: str | None,
    parents: Sequence[str],
    page: str | None,
    feedback: Mapping[str, float],
    related_feedback: Callable[[PartQuery, list[str]], Mapping[str, float]] | None = None,
    terms: list[str] | None = None,
    several: bool = False,
) -> PartOutcome:
    """Every signal for one part of the message, fused (``terms``: ``analyze(text)``, when known;
    ``several``: the message has other parts)."""
    signals = _Signals()
    slots = query_slots(index, text, terms)
    # Code terms that *are* a named ID are the question's subject, not content to cover.
    named = named_ids(index, text)
    named_terms = {code_term(index.entries[i].package_id) for i in named}
    for i in named:
        named_terms.update(code_term(a) for a in index.entries[i].aliases)
    content = [s for s in slots if not (s.terms and set(s.terms) <= named_terms)]

    context = _context_signals(index, signals, named, focus, parents, page)
    bm25_started = time.perf_counter()
    query = query_weights(content)
    cascade = _cascade_signal(index, signals, content, context, query)
    if not cascade:
        _corpus_signals(index, signals, content, query)
        if not several:
            _questions_signal(index, signals, content, query)
    bm25_ms = (time.perf_counter() - bm25_started) * 1000
    if not cascade:
        _dense_signal(index, signals, text, several)

    key = slots_key(slots)
    # Only the service asks for it (to compare wordings of one need): not paid for on a plain route.
    base_ranking = _base_ranking(index, signals) if related_feedback is not None else []
    if base_ranking:
        # Feedback learnt on another wording of the same need (same router ranking), see knowledge/feedback.py.
        feedback = dict(feedback)
        for pid, w in related_feedback(PartQuery(key, text, signals.vector), base_ranking).items():
            feedback[pid] = max(feedback.get(pid, 0.0), w)
    _feedback_signal(index, signals, feedback)
    fused = _wikilink_signal(index, signals, _fuse(index, signals))
    features = _rerank_signal(index, signals, content, fused)
    return PartOutcome(
        text,
        key,
        cascade,
        fused,
        signals.eligible,
        signals.why,
        bm25_ms,
        base_ranking,
        features,
        frozenset(signals.rankings.get("feedback", ())),
        _agreement(index, signals, several),
        signals.dense_sims[0] if signals.dense_sims is not None else None,
        signals.vector,
    )
