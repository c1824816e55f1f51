"""The knowledge router core: signals, cascade, fusion and delivery shaping.

Pure Python over any sequence of catalog entries (``knowledge.catalog.
PackageEntry`` or the ``Entry`` dataclass below): no database, no cache, no
settings. The Django layer (``knowledge.router``) owns the lifecycle, the
query cache and fetch feedback, and passes its settings in ``RouterConfig``.

Per part of the message:

1. **context hits** — an ID or alias named in the message; the UI semantic
   ID in focus (exact), then its parents (declared or by dotted prefix),
   then the page. *Cascade*: when these hits already cover every content
   term of the part, the part is answered from them (BM25 scores only those
   candidates, with whole-corpus IDF) and the corpus is not scanned;
2. otherwise **keywords** (every term of a curated keyword present) and
   **BM25+** over the weighted fields, kept when they pass the relevance
   threshold (coverage of the question's terms, see ``_Slot``);
3. **wiki-link neighbours** (one hop, both directions) of the strong hits;
4. **fetch feedback** for this question, given by the caller;
5. weighted reciprocal rank fusion of all of the above.

Then shaping over all parts: strict relevant rules in full; each part's best
eligible entries in full, round-robin across parts so every part's best
arrives, within the token budget and ``max_full`` per part; procedures by
name only; every other relevant entry listed (id, title, one line).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from common.identifiers import WIKILINK_RE, normalize_package_key, semantic_id_parents
from common.text import analyze, analyze_identifier, code_term, query_key, tokens

from .bm25 import SparseBM25Index
from .fusion import DEFAULT_RRF_K, DEFAULT_WEIGHTS, estimate_tokens, weighted_rrf
from .splitting import split_parts
from .typos import TypoExpander


KIND_KNOWLEDGE = "knowledge"
KIND_RULE = "rule"
KIND_PROCEDURE = "procedure"


class EntryLike(Protocol):
    package_id: str
    title: str
    summary: str
    kind: str
    strict: bool
    aliases: Sequence[str]
    keywords: Sequence[str]
    semantic_ids: Sequence[str]
    body: str
    revision: int


@dataclass(frozen=True, slots=True)
class Entry:
    """Minimal catalog entry (benchmarks, plain tests)."""

    package_id: str
    title: str
    summary: str = ""
    kind: str = KIND_KNOWLEDGE
    strict: bool = False
    aliases: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    semantic_ids: tuple[str, ...] = ()
    body: str = ""
    revision: int = 1


DEFAULT_FIELD_WEIGHTS: dict[str, float] = {
    "id": 3.0,
    "aliases": 3.0,
    "title": 2.5,
    "keywords": 2.0,
    "summary": 1.5,
    "body": 1.0,
}


@dataclass(frozen=True)
class RouterConfig:
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    rrf_k: float = DEFAULT_RRF_K
    field_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS))
    max_full_per_part: int = 3
    budget_tokens: int = 2000
    # Each extra part adds this fraction of the budget: asking two things
    # costs a bit more than one, never more with a bigger catalog.
    extra_part_budget: float = 0.5
    # Relevance threshold: share of the question's term weight (IDF) an
    # entry must contain. Language-neutral: it is relative to the
    # question's own terms, not to a raw score that varies with its length.
    listed_coverage: float = 0.3
    full_coverage: float = 0.35
    # An entry must also score at least this share of the part's best BM25.
    full_relative_score: float = 0.35
    # A full body also needs this share of the part's best fused score.
    full_relative_fused: float = 0.5
    bm25_top_k: int = 40
    typo_weight: float = 0.7
    # A question term the catalog has never seen weighs this many times the
    # rarest known term in the coverage denominator: talking about something
    # the catalog does not know is evidence of an out-of-domain question.
    unknown_term_weight: float = 1.5
    feedback_min_weight: float = 0.5
    k1: float = 1.2
    b: float = 0.75
    delta: float = 1.0


# ---------------------------------------------------------------- results


@dataclass
class Delivered:
    id: str
    title: str
    summary: str
    kind: str
    strict: bool
    revision: int
    shape: str  # "full" | "listed" | "name"
    score: float
    why: list[dict[str, Any]]
    body: str | None = None
    tokens: int = 0

    def as_full(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "revision": self.revision,
            "body": self.body,
            "score": round(self.score, 4),
            "why": self.why,
        }

    def as_listed(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summary": self.summary, "why": self.why}

    def as_procedure(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "summary": self.summary}

    def as_rule(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "summary": self.summary,
            "strict": self.strict,
            "shape": self.shape,
            "revision": self.revision,
            "score": round(self.score, 4),
            "why": self.why,
        }
        if self.shape == "full":
            out["body"] = self.body
        return out


@dataclass
class RouteResult:
    catalog_version: int
    parts: list[str]
    full: list[Delivered]
    listed: list[Delivered]
    procedures: list[Delivered]
    rules: list[Delivered]
    timings_ms: dict[str, float]
    cascade: list[bool]
    part_keys: list[str]
    budget_tokens: int
    used_tokens: int

    @property
    def full_ids(self) -> list[str]:
        return [d.id for d in self.full] + [r.id for r in self.rules if r.shape == "full"]

    @property
    def listed_ids(self) -> list[str]:
        return [d.id for d in self.listed] + [r.id for r in self.rules if r.shape != "full"]

    @property
    def delivered_ids(self) -> list[str]:
        return self.full_ids + self.listed_ids + [p.id for p in self.procedures]

    def ranked(self) -> list[Delivered]:
        """Every delivered entry, whatever its shape, best fused score first."""
        everything = [*self.full, *self.listed, *self.procedures, *self.rules]
        return sorted(everything, key=lambda d: -d.score)

    def best_shape_ids(self) -> list[str]:
        """Entries delivered in the best shape their kind allows: full, or by name for procedures."""
        return self.full_ids + [p.id for p in self.procedures]

    def as_dict(self) -> dict[str, Any]:
        return {
            "catalog_version": self.catalog_version,
            "parts": self.parts,
            "full": [d.as_full() for d in self.full],
            "listed": [d.as_listed() for d in self.listed],
            "procedures": [d.as_procedure() for d in self.procedures],
            "rules": [d.as_rule() for d in self.rules],
            "timings_ms": self.timings_ms,
        }


# ----------------------------------------------------------------- helpers


@dataclass
class _Slot:
    """One content term of the question (or its typo corrections)."""

    terms: list[str]  # index terms that count for this slot
    weight: float  # query weight of each term (1, or typo_weight)
    denom: float  # IDF this slot weighs in the coverage denominator
    label: str  # what the user typed (for `why`)


@dataclass
class _PartOutcome:
    text: str
    key: str
    cascade: bool
    fused: dict[int, float]
    eligible: set[int]
    why: dict[int, list[dict[str, Any]]]
    bm25_ms: float


# ------------------------------------------------------------------ router


class RouterIndex:
    """Everything the router needs about one catalog version, built once."""

    def __init__(self, entries: Sequence[EntryLike], *, config: RouterConfig | None = None, version: int = 0):
        started = time.perf_counter()
        self.config = config or RouterConfig()
        self.version = version
        self.entries: list[EntryLike] = list(entries)
        self.position: dict[str, int] = {e.package_id: i for i, e in enumerate(self.entries)}

        self._id_keys: dict[str, int] = {}
        self._semantic: dict[str, list[int]] = {}
        kw_groups: dict[tuple[str, ...], list[int]] = {}
        self._entry_keywords: list[tuple[tuple[tuple[str, ...], str], ...]] = []
        # A generator: each entry's term frequencies are consumed by the index
        # builder and dropped, so a big catalog's build does not hold them all.
        self.bm25 = SparseBM25Index.build_weighted(
            self._weighted_docs(kw_groups), k1=self.config.k1, b=self.config.b, delta=self.config.delta
        )
        # Keyword index: each distinct analyzed keyword → the entries carrying it,
        # reachable from its first term. A query touches only its own terms' keywords.
        # A keyword carried by a large share of a big catalog names nothing in
        # particular: it is left to BM25 (and not paid for on every question).
        max_carriers = max(50, len(self.entries) // 20)
        self._keyword_entries: dict[tuple[str, ...], np.ndarray] = {
            terms: np.unique(np.asarray(ids, dtype=np.int64))
            for terms, ids in kw_groups.items()
            if len(set(ids)) <= max_carriers
        }
        # Reachable from their rarest term: a common word heads few keyword lists.
        self._keywords_by_rarest: dict[str, list[tuple[str, ...]]] = {}
        for terms in self._keyword_entries:
            rarest = min(terms, key=lambda t: (self.bm25.df(t), t))
            self._keywords_by_rarest.setdefault(rarest, []).append(terms)
        self._typos = TypoExpander(self.bm25.vocabulary_df())
        self._typos.prepare()  # pay for the typo table at build time, not on a user's question
        self._body_tokens: dict[int, int] = {}
        # Wiki links, both directions, to entries of this catalog only.
        self._links: dict[int, list[int]] = {}
        for i, e in enumerate(self.entries):
            for target in WIKILINK_RE.findall(e.body or ""):
                j = self._id_keys.get(normalize_package_key(target))
                if j is not None and j != i:
                    self._links.setdefault(i, []).append(j)
                    self._links.setdefault(j, []).append(i)
        self.strict_rules = [i for i, e in enumerate(self.entries) if e.kind == KIND_RULE and e.strict]
        digest = hashlib.sha1()
        for e in self.entries:
            digest.update(f"{e.package_id}\x00{e.revision}\x00{e.kind}\x00{e.strict}\x00{e.title}\x00".encode())
            digest.update(f"{e.summary}\x00{e.aliases}\x00{e.keywords}\x00{e.semantic_ids}\x00{e.body}\x01".encode())
        # Identifies the content (cache keys); `source` is for the owner's bookkeeping.
        self.content_digest = digest.hexdigest()[:16]
        self.source: object = None
        self.build_ms = (time.perf_counter() - started) * 1000

    def __len__(self) -> int:
        return len(self.entries)

    def _weighted_docs(self, kw_groups: dict[tuple[str, ...], list[int]]):
        """Per entry, term → Σ field weight × occurrences (BM25F); fills the exact-match maps on the way."""
        fw = self.config.field_weights
        for i, e in enumerate(self.entries):
            fields = (
                ("id", analyze_identifier(e.package_id)),
                ("aliases", [t for a in e.aliases for t in analyze_identifier(a)]),
                ("title", analyze(e.title)),
                ("keywords", [t for k in e.keywords for t in analyze(k)]),
                ("summary", analyze(e.summary)),
                ("body", analyze(e.body)),
            )
            freqs: dict[str, float] = {}
            for name, terms in fields:
                w = fw.get(name, 1.0)
                for t, count in Counter(terms).items():  # counting in C: the body dominates
                    freqs[t] = freqs.get(t, 0.0) + w * count
            for name in (e.package_id, *e.aliases):
                key = normalize_package_key(name)
                if key:
                    self._id_keys.setdefault(key, i)
            for sid in e.semantic_ids:
                self._semantic.setdefault(sid.lower(), []).append(i)
            analyzed_keywords = []
            for kw in e.keywords:
                kw_terms = tuple(dict.fromkeys(analyze(kw)))
                if kw_terms:
                    kw_groups.setdefault(kw_terms, []).append(i)
                    analyzed_keywords.append((kw_terms, kw))
            self._entry_keywords.append(tuple(analyzed_keywords))
            yield freqs

    # ------------------------------------------------------------ signals

    def named_ids(self, text: str) -> list[int]:
        """Entries whose ID or alias appears as a token of the text.

        Only tokens written like identifiers count (with "_" or in capitals,
        or after "::"), so the word "preços" in a sentence does not "name"
        the alias PRECOS; it still matches through BM25 on the alias field.
        """
        found: list[int] = []
        for raw in tokens(text):
            if not ("_" in raw or (len(raw) >= 3 and raw.isupper()) or f"::{raw}" in text):
                continue
            i = self._id_keys.get(normalize_package_key(raw))
            if i is not None and i not in found:
                found.append(i)
        return found

    def semantic_hits(
        self, focus: str | None, parents: Sequence[str] = (), page: str | None = None
    ) -> tuple[list[int], list[tuple[int, str]], list[tuple[int, str]]]:
        exact: list[int] = []
        if focus:
            exact = list(self._semantic.get(focus.lower(), ()))
        parent_ids: list[str] = []
        for pid in [*(semantic_id_parents(focus) if focus else []), *parents]:
            if (
                pid
                and pid.lower() not in {p.lower() for p in parent_ids}
                and (not focus or pid.lower() != focus.lower())
            ):
                parent_ids.append(pid)
        parent_hits: list[tuple[int, str]] = []
        seen = set(exact)
        for pid in parent_ids:
            for i in self._semantic.get(pid.lower(), ()):
                if i not in seen:
                    parent_hits.append((i, pid))
                    seen.add(i)
        page_hits: list[tuple[int, str]] = []
        if page:
            for pid in [page, *semantic_id_parents(page)]:
                for i in self._semantic.get(pid.lower(), ()):
                    if i not in seen:
                        page_hits.append((i, page))
                        seen.add(i)
        return exact, parent_hits, page_hits

    def _slots(self, text: str) -> list[_Slot]:
        slots: list[_Slot] = []
        seen: set[str] = set()
        for term in analyze(text):
            if term in seen:
                continue
            seen.add(term)
            if term in self.bm25.vocabulary:
                slots.append(_Slot([term], 1.0, self.bm25.idf(term), term))
                continue
            fixes = self._typos.expand(term)
            if fixes:
                slots.append(_Slot(fixes, self.config.typo_weight, max(self.bm25.idf(f) for f in fixes), term))
            else:
                slots.append(_Slot([], 0.0, self.config.unknown_term_weight * self.bm25.max_idf, term))
        return slots

    def _query_weights(self, slots: Sequence[_Slot]) -> dict[str, float]:
        weights: dict[str, float] = {}
        for slot in slots:
            for t in slot.terms:
                weights[t] = weights.get(t, 0.0) + slot.weight
        return weights

    def _coverage(self, slots: Sequence[_Slot], docs: np.ndarray) -> tuple[np.ndarray, list[list[str]]]:
        """Share of the question's IDF each doc holds, and the terms it holds."""
        total = sum(s.denom for s in slots) or 1.0
        covered = np.zeros(len(docs))
        matched: list[list[str]] = [[] for _ in range(len(docs))]
        for slot in slots:
            best = np.zeros(len(docs))
            for t in slot.terms:
                present = self.bm25.contains(t, docs)
                value = slot.weight * self.bm25.idf(t)
                best = np.where(present & (value > best), value, best)
            for j in np.flatnonzero(best):
                matched[j].append(slot.label)
            covered += np.minimum(best, slot.denom)
        return covered / total, matched

    def keyword_hits(self, slots: Sequence[_Slot], limit: int | None = None) -> list[tuple[int, float, list[str]]]:
        """Entries with a curated keyword whose every term is in the question, best first."""
        present: set[str] = set()
        for s in slots:
            present.update(s.terms)
        matched = [
            terms
            for term in present
            for terms in self._keywords_by_rarest.get(term, ())
            if all(t in present for t in terms)
        ]
        if not matched:
            return []
        docs = np.concatenate([self._keyword_entries[terms] for terms in matched])
        weights = np.concatenate(
            [np.full(self._keyword_entries[terms].size, sum(self.bm25.idf(t) for t in terms)) for terms in matched]
        )
        hits, inverse = np.unique(docs, return_inverse=True)
        scores = np.bincount(inverse, weights=weights)
        limit = limit or self.config.bm25_top_k
        if hits.size > limit:
            keep = np.argpartition(-scores, limit)[:limit]
            hits, scores = hits[keep], scores[keep]
        order = np.lexsort((hits, -scores))
        matched_set = set(matched)
        return [
            (
                int(hits[j]),
                float(scores[j]),
                [kw for terms, kw in self._entry_keywords[hits[j]] if terms in matched_set],
            )
            for j in order
        ]

    def body_tokens(self, i: int) -> int:
        cached = self._body_tokens.get(i)
        if cached is None:
            cached = self._body_tokens[i] = estimate_tokens(self.entries[i].body)
        return cached

    # -------------------------------------------------------------- parts

    def _route_part(
        self,
        text: str,
        *,
        focus: str | None,
        parents: Sequence[str],
        page: str | None,
        feedback: Mapping[str, float],
    ) -> _PartOutcome:
        cfg = self.config
        rankings: dict[str, list[int]] = {}
        why: dict[int, list[dict[str, Any]]] = {}
        eligible: set[int] = set()

        def note(i: int, signal: str, rank: int, detail: str) -> None:
            why.setdefault(i, []).append({"signal": signal, "rank": rank, "detail": detail})

        slots = self._slots(text)
        # Code terms that *are* a named ID are the question's subject, not content to cover.
        named = self.named_ids(text)
        named_terms = {code_term(self.entries[i].package_id) for i in named}
        for i in named:
            named_terms.update(code_term(a) for a in self.entries[i].aliases)
        content = [s for s in slots if not (s.terms and set(s.terms) <= named_terms)]

        if named:
            rankings["id"] = named
            for r, i in enumerate(named, 1):
                note(i, "id", r, f"{self.entries[i].package_id} named in the message")
                eligible.add(i)
        exact, parent_hits, page_hits = self.semantic_hits(focus, parents, page)
        if exact:
            rankings["semantic"] = exact
            for r, i in enumerate(exact, 1):
                note(i, "semantic", r, f"exact: {focus}")
                eligible.add(i)
        if parent_hits:
            rankings["semantic_parent"] = [i for i, _ in parent_hits]
            for r, (i, pid) in enumerate(parent_hits, 1):
                note(i, "semantic_parent", r, f"parent: {pid}")
                if not exact:
                    eligible.add(i)
        if page_hits:
            rankings["semantic_page"] = [i for i, _ in page_hits]
            for r, (i, pid) in enumerate(page_hits, 1):
                note(i, "semantic_page", r, f"page: {pid}")
                if not exact and not parent_hits:
                    eligible.add(i)

        bm25_started = time.perf_counter()
        context = list(dict.fromkeys([*named, *exact, *(i for i, _ in parent_hits), *(i for i, _ in page_hits)]))
        cascade = False
        query = self._query_weights(content)
        if context:
            pool = np.asarray(context, dtype=np.int64)
            coverage, _ = self._coverage(content, pool) if content else (np.ones(len(pool)), [])
            # Union coverage: does some context hit hold each content term?
            uncovered = [s for s in content if not any(self.bm25.contains(t, pool).any() for t in s.terms)]
            cascade = not uncovered
        if cascade:
            if query:
                scores = self.bm25.scores(query, candidates=pool)
                order = sorted(range(len(pool)), key=lambda j: (-scores[j], j))
                ranked = [int(pool[j]) for j in order if coverage[j] > 0]
                if ranked:
                    rankings["bm25"] = ranked
                    for r, i in enumerate(ranked, 1):
                        note(i, "bm25", r, "scored among context hits only (cascade)")
        else:
            keyword_hits = self.keyword_hits(content)
            if keyword_hits:
                # A keyword alone is not an answer: the entry must also hold
                # enough of the question ("delivery time for a pizza").
                kw_docs = np.asarray([i for i, _, _ in keyword_hits], dtype=np.int64)
                kw_coverage, _ = self._coverage(content, kw_docs)
                for r, ((i, score, kws), cov) in enumerate(zip(keyword_hits, kw_coverage), 1):
                    rankings.setdefault("keyword", []).append(i)
                    strong = cov >= cfg.full_coverage
                    note(i, "keyword", r, ", ".join(kws) + ("" if strong else f" (coverage {cov:.2f}: listed only)"))
                    if strong:
                        eligible.add(i)
            hits = self.bm25.top_k(query, cfg.bm25_top_k) if query else []
            if hits:
                docs = np.asarray([i for i, _ in hits], dtype=np.int64)
                coverage, matched = self._coverage(content, docs)
                floor = self._floor(query)
                best = hits[0][1] - floor
                ranked_bm25: list[int] = []
                for j, (i, score) in enumerate(hits):
                    if coverage[j] < cfg.listed_coverage:
                        continue
                    ranked_bm25.append(i)
                    rel = (score - floor) / best if best > 0 else 0.0
                    strong = coverage[j] >= cfg.full_coverage and rel >= cfg.full_relative_score
                    note(
                        i,
                        "bm25",
                        len(ranked_bm25),
                        f"score {score:.2f}, coverage {coverage[j]:.2f} ({' '.join(matched[j])})"
                        + ("" if strong else ", below the full threshold"),
                    )
                    if strong:
                        eligible.add(i)
                if ranked_bm25:
                    rankings["bm25"] = ranked_bm25
        bm25_ms = (time.perf_counter() - bm25_started) * 1000

        # Fetch feedback for this question (computed by the caller, decayed).
        promoted = [
            self.position[pid]
            for pid, w in sorted(feedback.items(), key=lambda kv: -kv[1])
            if w >= cfg.feedback_min_weight and pid in self.position
        ]
        if promoted:
            rankings["feedback"] = promoted
            for r, i in enumerate(promoted, 1):
                note(
                    i, "feedback", r, f"fetched after being listed (weight {feedback[self.entries[i].package_id]:.2f})"
                )
                eligible.add(i)

        fused = weighted_rrf(rankings, cfg.weights, cfg.rrf_k)
        # One hop of wiki links from the strong hits, damped by the source's rank.
        strong = sorted((i for i in eligible), key=lambda i: -fused.get(i, 0.0))[: cfg.max_full_per_part]
        neighbours: list[int] = []
        for src in strong:
            for j in self._links.get(src, ()):
                if j not in neighbours and j not in strong:
                    neighbours.append(j)
                    note(j, "wikilink", len(neighbours), f"linked with {self.entries[src].package_id}")
        if neighbours:
            rankings["wikilink"] = neighbours
            fused = weighted_rrf(rankings, cfg.weights, cfg.rrf_k)
        key = " ".join(sorted({t for s in slots for t in (s.terms or [s.label])}))
        return _PartOutcome(text, key, cascade, {int(i): v for i, v in fused.items()}, eligible, why, bm25_ms)

    def _floor(self, query: Mapping[str, float]) -> float:
        return sum(self.bm25.delta * self.bm25.idf(t) * w for t, w in query.items())

    # -------------------------------------------------------------- route

    def route(
        self,
        message: str,
        *,
        focus: str | None = None,
        parents: Sequence[str] = (),
        page: str | None = None,
        feedback: Callable[[str], Mapping[str, float]] | Mapping[str, float] | None = None,
        budget_tokens: int | None = None,
        max_full: int | None = None,
    ) -> RouteResult:
        """Route one message: split, retrieve each part, fuse, shape.

        ``feedback`` is either a mapping package_id → decayed weight for the
        whole message, or a function of a part's key returning one.
        ``budget_tokens`` and ``max_full`` are per part.
        """
        started = time.perf_counter()
        parts_text = split_parts(message) or [message or ""]
        if not (message or "").strip() and (focus or page):
            parts_text = [""]
        t_split = time.perf_counter()

        outcomes: list[_PartOutcome] = []
        for text in parts_text:
            part_feedback: Mapping[str, float]
            if feedback is None:
                part_feedback = {}
            elif callable(feedback):
                part_feedback = feedback(query_key(text))
            else:
                part_feedback = feedback
            outcomes.append(self._route_part(text, focus=focus, parents=parents, page=page, feedback=part_feedback))
        t_retrieve = time.perf_counter()

        result = self._shape(outcomes, budget_tokens=budget_tokens, max_full=max_full)
        t_shape = time.perf_counter()
        result.timings_ms = {
            "split": round((t_split - started) * 1000, 3),
            "retrieve": round((t_retrieve - t_split) * 1000, 3),
            "bm25": round(sum(o.bm25_ms for o in outcomes), 3),
            "shape": round((t_shape - t_retrieve) * 1000, 3),
            "total": round((t_shape - started) * 1000, 3),
        }
        return result

    def _full_queue(self, outcome: _PartOutcome) -> list[int]:
        """A part's candidates for a full body, in order: fetched-after-listed first, then fused score.

        Besides passing the relevance threshold, a candidate must fuse to at
        least ``full_relative_fused`` of the part's best: the full shape is for
        the few best matches, and a body that merely shares common words with
        the question (more likely in the catalog's own language) is listed.
        """
        promoted = {i for i, notes in outcome.why.items() if any(n["signal"] == "feedback" for n in notes)}
        candidates = [i for i in outcome.eligible if self.entries[i].kind != KIND_PROCEDURE]
        if not candidates:
            return []
        best = max(outcome.fused.get(i, 0.0) for i in candidates)
        gate = self.config.full_relative_fused * best
        kept = [i for i in candidates if i in promoted or outcome.fused.get(i, 0.0) >= gate]
        return sorted(kept, key=lambda i: (i not in promoted, -outcome.fused.get(i, 0.0), i))

    def _shape(self, outcomes: list[_PartOutcome], *, budget_tokens: int | None, max_full: int | None) -> RouteResult:
        cfg = self.config
        n_parts = max(len(outcomes), 1)
        per_part_budget = cfg.budget_tokens if budget_tokens is None else budget_tokens
        per_part_max = cfg.max_full_per_part if max_full is None else max_full
        budget = int(per_part_budget * (1 + cfg.extra_part_budget * (n_parts - 1)))

        best_score: dict[int, float] = {}
        why: dict[int, list[dict[str, Any]]] = {}
        for p, o in enumerate(outcomes):
            for i, s in o.fused.items():
                best_score[i] = max(best_score.get(i, 0.0), s)
            for i, notes in o.why.items():
                why.setdefault(i, []).extend(({**n, "part": p} for n in notes) if n_parts > 1 else notes)

        def make(i: int, shape: str) -> Delivered:
            e = self.entries[i]
            body = e.body if shape == "full" else None
            return Delivered(
                id=e.package_id,
                title=e.title,
                summary=e.summary,
                kind=e.kind,
                strict=bool(e.strict),
                revision=e.revision,
                shape=shape,
                score=best_score.get(i, 0.0),
                why=why.get(i, []),
                body=body,
                tokens=self.body_tokens(i) if body else 0,
            )

        relevant = sorted(best_score, key=lambda i: (-best_score[i], i))
        full_set: list[int] = []
        used = 0
        over_budget: set[int] = set()

        # Strict rules that passed the relevance test keep their body, always.
        for i in relevant:
            e = self.entries[i]
            if e.kind == KIND_RULE and e.strict:
                full_set.append(i)
                used += self.body_tokens(i)

        # Round-robin over parts so that every part's best arrives in full.
        queues = [self._full_queue(o) for o in outcomes]
        taken = [0] * len(outcomes)
        progress = True
        while progress:
            progress = False
            for p, queue in enumerate(queues):
                while queue and taken[p] < per_part_max:
                    i = queue.pop(0)
                    if i in full_set:
                        continue
                    cost = self.body_tokens(i)
                    if used + cost > budget:
                        over_budget.add(i)
                        continue
                    full_set.append(i)
                    used += cost
                    taken[p] += 1
                    progress = True
                    break

        full: list[Delivered] = []
        listed: list[Delivered] = []
        procedures: list[Delivered] = []
        rules: list[Delivered] = []
        full_order = sorted(full_set, key=lambda i: (-best_score.get(i, 0.0), i))
        for i in full_order:
            (rules if self.entries[i].kind == KIND_RULE else full).append(make(i, "full"))
        for i in relevant:
            if i in full_set:
                continue
            e = self.entries[i]
            if e.kind == KIND_PROCEDURE:
                procedures.append(make(i, "name"))
                continue
            d = make(i, "listed")
            if i in over_budget:
                d.why = [*d.why, {"signal": "budget", "rank": 0, "detail": "over the token budget: listed"}]
            (rules if e.kind == KIND_RULE else listed).append(d)
        return RouteResult(
            catalog_version=self.version,
            parts=[o.text for o in outcomes],
            full=full,
            listed=listed,
            procedures=procedures,
            rules=rules,
            timings_ms={},
            cascade=[o.cascade for o in outcomes],
            part_keys=[o.key for o in outcomes],
            budget_tokens=budget,
            used_tokens=used,
        )
