"""The router's index of one catalog version, and ``route``: split, signals, fusion, shaping.

Pure Python over any sequence of catalog entries: no database, no cache, no
settings. The Django layer (``knowledge.routing_service``) owns the lifecycle,
the query cache and fetch feedback, and passes its settings in ``RouterConfig``.

Per part of the message (``signals.route_part``):

1. **context hits** — an ID or alias named in the message; the UI semantic
   ID in focus (exact), then its parents (declared or by dotted prefix),
   then the page. *Cascade*: when these hits already cover every content
   term of the part, the part is answered from them (BM25 scores only those
   candidates, with whole-corpus IDF) and the corpus is not scanned;
2. otherwise **keywords** (every term of a curated keyword present) and
   **BM25+** over the weighted fields, kept when they pass the relevance
   threshold (coverage of the question's terms, see ``signals.Slot``);
3. **wiki-link neighbours** (one hop, both directions) of the strong hits;
4. **fetch feedback** for this question, given by the caller;
5. weighted reciprocal rank fusion of all of the above (``fusion``).

Then shaping over all parts (``shaping.shape``): strict relevant rules in
full; each part's best eligible entries in full, round-robin across parts so
every part's best arrives, within the token budget and ``max_full`` per part;
procedures by name only; every other relevant entry listed (id, title, one line).
"""

from __future__ import annotations

import functools
import gc
import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from common.identifiers import WIKILINK_RE, normalize_package_key
from common.text import analyze, analyze_identifier, query_key

from .bm25 import SparseBM25Index
from .dense import DenseIndex
from .entries import KIND_RULE, EntryLike, RouterConfig
from .expansion import QueryExpander, load_lexicon
from .fusion import estimate_tokens, estimate_tokens_many
from .index_tables import export_tables, import_tables
from .postings import weighted_parts
from .questions import QuestionsIndex
from .shaping import RouteResult, shape
from .signals import CONTEXT_SIGNALS, PartOutcome, PartQuery, route_part
from .splitting import split_parts_analyzed
from .tables import StrTable
from .typos import TypoExpander


def _digest_entry(digest, e: EntryLike) -> None:
    digest.update(f"{e.package_id}\x00{e.revision}\x00{e.kind}\x00{e.strict}\x00{e.title}\x00".encode())
    digest.update(f"{e.summary}\x00{e.aliases}\x00{e.keywords}\x00{e.semantic_ids}\x00{e.body}\x01".encode())
    digest.update(f"{getattr(e, 'search_terms', ())}\x02".encode())
    asked = getattr(e, "example_questions", ())
    if asked:  # (not digested when absent: catalogs without questions keep their digests and segments)
        digest.update(f"{asked}\x03".encode())


def entries_digest(entries: Iterable[EntryLike]) -> str:
    """Digest of everything the index reads of the entries, in order."""
    digest = hashlib.sha1()
    for e in entries:
        _digest_entry(digest, e)
    return digest.hexdigest()[:16]


class EntriesDigest:
    """``entries_digest`` of a stream, taken as its entries pass by (``passing``): a stream read once."""

    def __init__(self):
        self._digest = hashlib.sha1()

    def passing(self, entries: Iterable[EntryLike]) -> Iterator[EntryLike]:
        for e in entries:
            _digest_entry(self._digest, e)
            yield e

    def hexdigest(self) -> str:
        return self._digest.hexdigest()[:16]


def entry_link_keys(e: EntryLike) -> tuple[str, ...]:
    """The package keys an entry's body links to, in order (repeats kept)."""
    # No ``"[[" in body`` test first: the pattern's literal prefix is searched as fast, and a body with
    # links was scanned twice (~0.1 s at 100,000 entries; a body without links is no slower).
    return tuple(package_key(target) for target in WIKILINK_RE.findall(e.body or ""))


def resolve_links(
    link_keys: Sequence[tuple[str, ...]], id_keys: Mapping[str, int], slots: Iterable[int]
) -> dict[int, list[int]]:
    """Links both directions between entries (by slot), from each live slot's targets in slot order."""
    links: dict[int, list[int]] = {}
    for i in slots:
        for key in link_keys[i]:
            j = id_keys.get(key)
            if j is not None and j != i:
                links.setdefault(i, []).append(j)
                links.setdefault(j, []).append(i)
    return links


# A key normalize_package_key would return unchanged (IDs as the catalog stores them).
_CANONICAL_KEY_RE = re.compile(r"[A-Z0-9]+(?:_[A-Z0-9]+)*")


def package_key(name: str) -> str:
    """``normalize_package_key`` with a fast path for names already in canonical form."""
    return name if _CANONICAL_KEY_RE.fullmatch(name) else normalize_package_key(name)


def release_free_heap() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``); elsewhere a no-op.

    The build's batches (numpy temporaries of a few MB each) are served from the C heap once
    glibc's adaptive mmap threshold has risen; freed, they leave holes that Python's own objects
    (pymalloc arenas, mapped apart) never reuse, so without this they stay resident for the rest of
    the build and after it.
    """
    trim = _MALLOC_TRIM
    if trim is not None:
        trim(0)


def _malloc_trim():
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


_MALLOC_TRIM = _malloc_trim()


def _body_token_counts(entries: Sequence[EntryLike], body_words: np.ndarray) -> np.ndarray | None:
    """Every body's ``estimate_tokens`` from the word counts the build took (``postings.weighted_parts``);
    None when it took none (a body field without weight is not read)."""
    if len(body_words) and int(body_words.min()) < 0:
        return None
    chars = np.fromiter((len(e.body or "") for e in entries), dtype=np.int64, count=len(entries))
    return estimate_tokens_many(chars, body_words)


# Builds running now (threads of one process) and the thresholds the first of them found.
_paused_lock = threading.Lock()
_paused = {"builds": 0, "thresholds": None}


@contextmanager
def full_collections_paused():
    """No full (oldest-generation) garbage collection while the index is built; the thresholds after.

    A build creates millions of objects that live as long as the index (keyword
    maps, per-entry tables, the typo table) and no reference cycles: each full
    collection walks every object of the process and frees nothing, nine of them
    ~2.2 s of a ~14 s (CPU) build at 100,000 entries. Young collections still run
    (they are cheap, and they age the build's objects, so the first full
    collection after the build walks them once). Process-wide for the build's
    duration: other threads' old cyclic garbage waits for the end of the build.
    Concurrent builds (a background build and a request's) share one pause: the
    first saves the thresholds, the last gives them back.
    """
    with _paused_lock:
        if _paused["builds"] == 0:
            _paused["thresholds"] = thresholds = gc.get_threshold()
            gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)
        _paused["builds"] += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused["builds"] -= 1
            if _paused["builds"] == 0:
                gc.set_threshold(*_paused["thresholds"])


def _paused_while_building(init):
    """``RouterIndex.__init__`` under ``full_collections_paused`` when it builds (no ``bm25`` given);
    an index over a mapped segment makes few objects, and a pause would only move the next full
    collection into whatever comes after it."""

    @functools.wraps(init)
    def wrapper(self, entries, **kwargs):
        if kwargs.get("bm25") is not None:
            return init(self, entries, **kwargs)
        with full_collections_paused():
            return init(self, entries, **kwargs)

    return wrapper


class RouterIndex:
    """Everything the router needs about one catalog version, built once."""

    @_paused_while_building
    def __init__(
        self,
        entries: Sequence[EntryLike],
        *,
        config: RouterConfig | None = None,
        version: int = 0,
        dense: DenseIndex | None = None,
        bm25: SparseBM25Index | None = None,
        content_digest: str | None = None,
        tables: Mapping[str, object] | None = None,
    ):
        """Build the index; ``bm25``: the BM25 part already built for these entries and this config
        (a memory-mapped segment, ``segments.segment_load``), ``content_digest``: ``entries_digest(entries)``,
        ``dense``: entry vectors for the dense signal (``attach_dense``), ``tables``: the per-entry tables
        stored with that segment (``segments.segment_load``): mapped, not built from the entries.
        """
        started = time.perf_counter()
        self.config = config or RouterConfig()
        self.version = version
        self.entries: list[EntryLike] = list(entries)
        # Per entry, the token estimate of its body (what delivering it in full costs the budget):
        # counted by the build (``_body_token_counts``) or stored in the segment, else on first use.
        self.body_token_counts: np.ndarray | None = None
        if bm25 is None:
            body_words = np.full(len(self.entries), -1, dtype=np.int64)
            # By parts: the batches' triplets are freed as their postings are placed (peak memory).
            bm25 = SparseBM25Index.from_parts(
                *weighted_parts(self.entries, self.config.field_weights, body_words=body_words),
                k1=self.config.k1,
                b=self.config.b,
                delta=self.config.delta,
            )
            self.body_token_counts = _body_token_counts(self.entries, body_words)
            del body_words
            release_free_heap()
        elif bm25.n_docs != len(self.entries):
            raise ValueError(f"BM25 segment of {bm25.n_docs} documents for {len(self.entries)} entries")
        self.bm25 = bm25
        vocabulary_df = self.bm25.vocabulary_df()
        mapped = (
            import_tables(tables, self.entries, bm25.vocabulary)
            if tables and isinstance(bm25.vocabulary, StrTable)
            else None
        )
        if mapped is not None:
            self._map_tables(mapped, vocabulary_df)
        else:
            self._build_tables(vocabulary_df)
        self.expander = self._build_expander(vocabulary_df)
        # The example questions' words (signals._questions_signal): per process, none without a weight.
        self.questions = self._build_questions()
        # Training the re-ranker reads every part's candidate features.
        self.collect_features = False
        self._body_tokens: dict[int, int] = {}
        self.strict_rules = [i for i, e in enumerate(self.entries) if e.kind == KIND_RULE and e.strict]
        # A delta index (delta.index_with_edits) names its base and how many entries are live.
        self.delta_base: RouterIndex | None = None
        self.live_count = len(self.entries)
        # Identifies the content (cache keys, segment keys); `source` is for the owner's bookkeeping.
        self.content_digest = content_digest or entries_digest(self.entries)
        self.dense: DenseIndex | None = None
        self.attach_dense(dense)
        self.source: object = None
        self.build_ms = (time.perf_counter() - started) * 1000

    def _map_tables(self, mapped: Mapping[str, object], vocabulary_df: Mapping[str, int]) -> None:
        """The per-entry tables as views over a segment's mapped arrays (``index_tables``)."""
        for name in (
            "position",
            "id_keys",
            "semantic",
            "keyword_ids",
            "keyword_entries",
            "keywords_too_common",
            "keywords_by_rarest",
            "entry_keywords",
            "links",
            "link_keys",
        ):
            setattr(self, name, mapped[name])
        self.body_token_counts = mapped["body_tokens"]
        self.typos = TypoExpander(vocabulary_df)
        self.typos._deletes = mapped["typo_table"]

    def _build_tables(self, vocabulary_df: Mapping[str, int]) -> None:
        """The per-entry tables built from the entries, in this process."""
        self.position: Mapping[str, int] = {e.package_id: i for i, e in enumerate(self.entries)}
        self.id_keys: Mapping[str, int] = {}
        self.semantic: Mapping[str, Sequence[int]] = {}
        kw_groups: dict[tuple[str, ...], list[int]] = {}
        self.keyword_ids: Mapping[tuple[str, ...], int] = {}
        # Per entry: (keyword id, keyword as written).
        self.entry_keywords: Sequence[tuple[tuple[int, str], ...]] = []
        # Per entry: where in ``e.keywords`` each of those is (what a segment stores instead of the text).
        self.entry_keyword_positions: list[list[int]] = []
        self._exact_match_maps(kw_groups)
        # Keyword index: each distinct analyzed keyword → the entries carrying it,
        # reachable from its first term. A query touches only its own terms' keywords.
        # A keyword carried by a large share of a big catalog names nothing in
        # particular: it is left to BM25 (and not paid for on every question).
        max_carriers = max(50, len(self.entries) // 20)
        self.keyword_entries: dict[tuple[str, ...], np.ndarray] = {}
        self.keywords_too_common: set[tuple[str, ...]] = set()
        for terms, ids in kw_groups.items():
            unique = list(dict.fromkeys(ids))  # ids ascend (entry order): this is np.unique without its cost
            if len(unique) <= max_carriers:
                self.keyword_entries[terms] = np.array(unique, dtype=np.int64)
            else:
                self.keywords_too_common.add(terms)
        # Reachable from their rarest term: a common word heads few keyword lists.
        self.keywords_by_rarest: dict[str, list[tuple[str, ...]]] = {}
        df = vocabulary_df.get
        for terms in self.keyword_entries:
            rarest = terms[0] if len(terms) == 1 else min(terms, key=lambda t: (df(t, 0), t))
            self.keywords_by_rarest.setdefault(rarest, []).append(terms)
        self.typos = TypoExpander(vocabulary_df)
        self.typos.prepare()  # pay for the typo table at build time, not on a user's question
        # Wiki links, both directions, to entries of this catalog only. The targets
        # are kept (as keys) so a delta can resolve them again against new IDs.
        self.link_keys: Sequence[tuple[str, ...]] = [entry_link_keys(e) for e in self.entries]
        self.links: Mapping[int, Sequence[int]] = resolve_links(self.link_keys, self.id_keys, range(len(self.entries)))

    def shared_tables(self) -> dict[str, object]:
        """The per-entry tables as arrays, to store with the BM25 segment (``segments.segment_write``)."""
        return export_tables(self)

    def attach_dense(self, dense: DenseIndex | None) -> None:
        """Entry vectors for the dense signal (aligned with entries), or None: the signal is skipped.

        The vectors are part of what the index answers, so they enter its content digest (cache keys).
        """
        self.dense = dense if dense is not None and len(dense) == len(self.entries) and dense.has_any else None
        if self.dense is not None:
            digest = hashlib.sha1(self.content_digest.encode())
            digest.update(f"dense\x00{self.dense.model_id}\x00{self.dense.present.tobytes().hex()}".encode())
            self.content_digest = digest.hexdigest()[:16]

    def __len__(self) -> int:
        return self.live_count

    def _build_questions(self) -> QuestionsIndex | None:
        cfg = self.config
        if not cfg.weights.get("questions"):
            return None
        return QuestionsIndex.build(self.entries, k1=cfg.k1, b=cfg.b, delta=cfg.delta)

    def _build_expander(self, vocabulary: Mapping[str, int]) -> QueryExpander | None:
        cfg = self.config
        if cfg.lexicon_weight <= 0 and cfg.cognate_weight <= 0 and not (cfg.synonyms and cfg.synonym_weight > 0):
            return None
        return QueryExpander(
            vocabulary,
            lexicon=load_lexicon(cfg.catalog_language) if cfg.lexicon_weight > 0 else None,
            synonyms=cfg.synonyms,
            lexicon_weight=cfg.lexicon_weight,
            cognate_weight=cfg.cognate_weight,
            synonym_weight=cfg.synonym_weight,
        )

    def field_terms(self) -> list[dict[str, set[str]]]:
        """Per entry, the analyzed terms of its name (ID, aliases, title), keywords and summary; built on first use."""
        cached = getattr(self, "_field_terms", None)
        if cached is None:
            cached = self._field_terms = [
                {
                    "name": {
                        *analyze_identifier(e.package_id),
                        *(t for a in e.aliases for t in analyze_identifier(a)),
                        *analyze(e.title),
                    },
                    "keywords": {t for k in e.keywords for t in analyze(k)},
                    "summary": set(analyze(e.summary)),
                }
                for e in self.entries
            ]
        return cached

    def _exact_match_maps(self, kw_groups: dict[tuple[str, ...], list[int]]) -> None:
        """IDs and aliases, semantic IDs, and each entry's analyzed curated keywords."""
        # Keyword as written → (its id, the entries carrying its terms), None if it has no terms: keywords
        # repeat across entries, and a string's hash is cached where a tuple of terms' is not.
        analyzed: dict[str, tuple[int, list[int]] | None] = {}
        for i, e in enumerate(self.entries):
            for name in (e.package_id, *e.aliases):
                key = package_key(name)
                if key:
                    self.id_keys.setdefault(key, i)
            for sid in e.semantic_ids:
                self.semantic.setdefault(sid.lower(), []).append(i)
            analyzed_keywords = []
            kept_at = []
            for j, kw in enumerate(e.keywords):
                known = analyzed.get(kw, False)
                if known is False:
                    kw_terms = tuple(dict.fromkeys(analyze(kw)))
                    known = analyzed[kw] = (
                        # By a small int id: the hot path compares ids, not tuples of strings.
                        (
                            self.keyword_ids.setdefault(kw_terms, len(self.keyword_ids)),
                            kw_groups.setdefault(kw_terms, []),
                        )
                        if kw_terms
                        else None
                    )
                if known is not None:
                    known[1].append(i)
                    analyzed_keywords.append((known[0], kw))
                    kept_at.append(j)
            self.entry_keywords.append(tuple(analyzed_keywords))
            self.entry_keyword_positions.append(kept_at)

    def body_tokens(self, i: int) -> int:
        """``estimate_tokens`` of entry ``i``'s body: an edit's (a delta's ``_body_tokens``) first, then the
        build's count, else worked out now and remembered."""
        cached = self._body_tokens.get(i)
        if cached is None:
            counts = self.body_token_counts
            if counts is not None and i < len(counts):
                return int(counts[i])
            cached = self._body_tokens[i] = estimate_tokens(self.entries[i].body)
        return cached

    def route(
        self,
        message: str,
        *,
        focus: str | None = None,
        parents: Sequence[str] = (),
        page: str | None = None,
        feedback: Callable[[str], Mapping[str, float]] | Mapping[str, float] | None = None,
        related_feedback: Callable[[PartQuery, list[str]], Mapping[str, float]] | None = None,
        budget_tokens: int | None = None,
        max_full: int | None = None,
    ) -> RouteResult:
        """Route one message: split, retrieve each part, fuse, shape.

        ``feedback`` is either a mapping package_id → decayed weight for the
        whole message, or a function of a part's key returning one.
        ``related_feedback(part, part ranking before feedback)`` adds
        feedback learnt on other wordings of the same need (``part``: a
        ``signals.PartQuery``, its key, text and the vector the dense signal
        computed, if it did).
        ``budget_tokens`` and ``max_full`` are per part.
        """
        started = time.perf_counter()
        parts = split_parts_analyzed(message) or [(message or "", None)]
        if not (message or "").strip() and (focus or page):
            parts = [("", None)]
        t_split = time.perf_counter()

        outcomes: list[PartOutcome] = []
        several = len(parts) > 1
        for text, terms in parts:
            part_feedback: Mapping[str, float]
            if feedback is None:
                part_feedback = {}
            elif callable(feedback):
                part_feedback = feedback(query_key(text))
            else:
                part_feedback = feedback
            outcomes.append(
                route_part(
                    self,
                    text,
                    focus=focus,
                    parents=parents,
                    page=page,
                    feedback=part_feedback,
                    related_feedback=related_feedback,
                    terms=terms,
                    several=several,
                )
            )
        meaning = message_meaning(self, message, outcomes) if several else None
        message_ranking = message_ranking_of(self, meaning)
        verdict = background_verdict(self, outcomes, meaning)
        t_retrieve = time.perf_counter()

        result = shape(
            self,
            outcomes,
            budget_tokens=budget_tokens,
            max_full=max_full,
            message_ranking=message_ranking,
            background=verdict,
        )
        t_shape = time.perf_counter()
        result.timings_ms = {
            "split": round((t_split - started) * 1000, 3),
            "retrieve": round((t_retrieve - t_split) * 1000, 3),
            "bm25": round(sum(o.bm25_ms for o in outcomes), 3),
            "shape": round((t_shape - t_retrieve) * 1000, 3),
            "total": round((t_shape - started) * 1000, 3),
        }
        return result


def message_meaning(index: RouterIndex, message: str, outcomes) -> tuple[np.ndarray | None, np.ndarray] | None:
    """A message of several parts taken whole: (its vector, every entry's cosine with it). A context
    sentence and the question after it ("I'm moving to Portugal with my cat. What paperwork does she
    need?") are routed as two parts, and neither alone says what the message means. The vector is None
    when the cosines are read from the parts' (``message_from_parts``: their mean, no embedding). None
    when the signal is off, when no part was embedded (the dense signal off, or its gate found every
    part's words enough) or when the cascade answered a part."""
    cfg = index.config
    dense = index.dense
    if dense is None or not cfg.weights.get("message") or any(o.cascade for o in outcomes):
        return None
    meanings = [o.meaning for o in outcomes if o.meaning is not None]
    if not meanings:
        return None
    if cfg.message_from_parts:
        return None, np.mean(meanings, axis=0)
    vector = dense.query_vector(message)
    if vector is None:
        return None
    return vector, dense.similarities(vector, cfg.dense_closest_example_share)


def message_ranking_of(index: RouterIndex, view) -> list[tuple[int, float, float]] | None:
    """The entries closest to the whole message (``message_meaning``), as (entry, cosine, lift over the
    catalog's mean cosine), best first (``dense_top_k``); None without a meaning."""
    if view is None:
        return None
    ranked, mean = index.dense.top_of(view[1], index.config.dense_top_k)
    return [(i, sim, sim - mean) for i, sim in ranked] or None


def background_verdict(index: RouterIndex, outcomes, meaning=None) -> tuple[float, float, str] | None:
    """(closest question's cosine, closest entry's cosine, "background" or "out_of_scope") when the whole
    message is closer to a question no entry answers than to any entry of the catalog: a general question
    about everyday life (background.py) by at least ``background_margin``, or one of the catalog's own
    out-of-scope questions (``out_of_scope``) by at least ``out_of_scope_margin`` (each ``…_examples``
    when that entry has accepted example questions); None otherwise, when every margin is off, when no
    part was embedded, or when the UI context or an ID answered any part (the message is then about
    something on the user's screen).

    The message's vector is never embedded here: one part's own, or with several the whole message's as
    ``message_meaning`` embedded it (``meaning``), else the mean of the parts' vectors."""
    cfg = index.config
    dense = index.dense
    general = min(cfg.background_margin, cfg.background_margin_examples) <= 2.0
    own = bool(cfg.out_of_scope) and min(cfg.out_of_scope_margin, cfg.out_of_scope_margin_examples) <= 2.0
    if dense is None or not (general or own):
        return None
    if all(o.meaning is None for o in outcomes):
        return None
    for o in outcomes:
        if o.cascade or any(n[0] in CONTEXT_SIGNALS for notes in o.why.values() for n in notes):
            return None
    if len(outcomes) == 1:
        vector, sims = outcomes[0].vector, outcomes[0].meaning
    elif meaning is not None and meaning[0] is not None:
        vector, sims = meaning
    else:
        vectors = [o.vector for o in outcomes if o.vector is not None]
        if not vectors:
            return None
        vector = np.mean(vectors, axis=0)
        vector /= np.linalg.norm(vector) or 1.0
        sims = dense.similarities(vector, cfg.dense_closest_example_share)
    if vector is None or sims is None:
        return None
    top = int(np.argmax(sims))
    best = float(sims[top])
    examples = dense.has_examples(top)
    margin = cfg.background_margin_examples if examples else cfg.background_margin
    if margin <= 2.0:
        closest = dense.closest_background(vector)
        if closest is not None and closest - best >= margin:
            return closest, best, "background"
    margin = cfg.out_of_scope_margin_examples if examples else cfg.out_of_scope_margin
    if cfg.out_of_scope and margin <= 2.0:
        closest = dense.closest_question(vector, cfg.out_of_scope)
        if closest is not None and closest - best >= margin:
            return closest, best, "out_of_scope"
    return None
