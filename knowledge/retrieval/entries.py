"""What the router reads about a catalog entry, and how it is weighed and tuned.

Any object with these attributes will do (``knowledge.catalog.PackageEntry``
in the app, ``Entry`` in benchmarks and plain tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .fusion import DEFAULT_RRF_K, DEFAULT_WEIGHTS

KIND_KNOWLEDGE = "knowledge"
KIND_RULE = "rule"
KIND_PROCEDURE = "procedure"
# Chosen by leave-one-catalog-out cross-validation over the dev splits (docs/retrieval.md).
DEFAULT_LEXICON_WEIGHT = 0.5


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
    # Accepted LLM-proposed English/Spanish search terms (knowledge/search_terms.py).
    search_terms: tuple[str, ...] = ()
    # Accepted example questions (knowledge/search_terms.py): their words feed the "questions" signal.
    example_questions: tuple[str, ...] = ()


DEFAULT_FIELD_WEIGHTS: dict[str, float] = {
    "id": 3.0,
    "aliases": 3.0,
    "title": 2.5,
    "keywords": 2.0,
    "summary": 1.5,
    "body": 1.0,
    # Accepted LLM-proposed search terms: below curated keywords.
    "search_terms": 1.0,
}


@dataclass(frozen=True)
class RouterConfig:
    """Every tuning knob of the router, with its default (the only place defaults live)."""

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
    # Query expansion (knowledge/retrieval/expansion.py): the weight of a
    # term's alternatives relative to the term itself; 0 turns a source off.
    lexicon_weight: float = DEFAULT_LEXICON_WEIGHT
    cognate_weight: float = 0.0
    synonym_weight: float = 0.8
    synonyms: tuple[tuple[str, ...], ...] = ()
    # Learned re-ranker (knowledge/retrieval/rerank.py): weights (bias last); None: off.
    # A candidate's probability replaces its fused score among the part's best, and
    # at least ``rerank_full_probability`` makes it eligible for full.
    rerank_weights: tuple[float, ...] | None = None
    rerank_full_probability: float = 1.1
    # Below this probability a candidate loses the hand-set rules' full eligibility (abstention).
    rerank_veto_probability: float = 0.0
    # Whether the model's order replaces the fused order among the part's best.
    rerank_reorder: bool = True
    # Dense signal (knowledge/retrieval/dense.py): its weight is weights["dense"]; these shape it.
    # Entries ranked by cosine with the question: at most this many, each at least
    # ``dense_floor`` above the question's mean cosine over the catalog.
    dense_top_k: int = 5
    dense_floor: float = 0.0
    # The dense top entry becomes eligible for full when its cosine stands this far above the
    # question's mean cosine over the catalog ("lift": a question about nothing in particular is
    # about equally close to every entry). > 2: never. Chosen in the e5 + USE space (with e5 alone
    # it was 0.06; docs/retrieval.md, "Two encoders"), like ``dense_veto_lift`` (0.025 with e5 alone).
    dense_full_lift: float = 0.07
    # The same for an entry whose vector blends in accepted example questions (dense.with_examples):
    # its cosines run lower. Chosen by leave-one-catalog-out (docs/retrieval.md, "Example questions").
    dense_full_lift_examples: float = 0.05
    # Such an entry's cosine is mixed with its closest example question's, this share of it
    # (DenseIndex.similarities): 0 ranks by the blend alone. Chosen with the lift above by
    # leave-one-catalog-out (docs/retrieval.md, "The closest example question").
    dense_closest_example_share: float = 0.3
    # The dense top entry is ranked once more (signal "dense_margin", its own weight) when its cosine
    # exceeds the runner-up's by at least this. > 2: off. Chosen by leave-one-catalog-out
    # (docs/retrieval.md, "Dense margin").
    dense_margin: float = 0.02
    # When to embed the question: "always", or skip it when the lexical signals already found the
    # answer ("agreement": keyword and BM25 top the same strong entry; "bm25_strong": BM25's top is
    # strong; "covered": BM25's top is strong and holds at least ``dense_gate_coverage`` of the
    # question's IDF). Chosen by leave-one-catalog-out: "covered" in the second round, "always" on
    # twelve catalogs in the sixteenth (docs/retrieval.md, "Every part embedded").
    dense_gate: str = "always"
    dense_gate_coverage: float = 0.7
    # Meaning check of lexical full bodies (signals._dense_veto), on every embedded part: an entry
    # eligible through keywords or BM25 alone whose cosine with the question is outside the dense
    # top ``dense_veto_rank`` and stands less than ``dense_veto_lift`` above the catalog's mean
    # cosine is listed instead of given in full. > 2: off.
    dense_veto_lift: float = 0.02
    dense_veto_rank: int = 5
    # Whether the meaning check may veto an entry a curated keyword holds (every term of the keyword in
    # the question, and the question's coverage): False leaves such entries to the curator's word.
    dense_veto_keywords: bool = True
    # An entry whose BM25 match holds at least this share of the question's IDF (its coverage) is left
    # out of the check: the question's words are the entry's, whatever the encoders make of them
    # ("Qual o turnaround do NGS?", coverage 1.0, which both encoders place fifth). > 1: none left out.
    # Chosen by leave-one-catalog-out (0.7 / 0.8 / 0.9 / 1.0 / none; docs/retrieval.md, as above).
    dense_veto_coverage: float = 0.8
    # Whether that exemption holds for a part of a longer message too. Such a part is short and one word
    # can hold all of it ("¿Quién se encarga?", whose "encarg" meets a late-fee article's "encargos").
    # Leave-one-catalog-out would take it (about one dev question more on the objective), but it gives
    # about 45 more full bodies nobody asked for over the twelve dev splits: off (docs/retrieval.md, as
    # above).
    dense_veto_coverage_several: bool = False
    # The same check for a message of one part, when set (None: as above). Out-of-domain questions
    # come as one part; a part of a longer message is short, its meaning less distinct. Chosen by
    # leave-one-catalog-out with ``dense_veto_coverage`` in the eighteenth round (rank 3, lift 0.025;
    # docs/retrieval.md, "The one-part meaning check, with the question's own words exempt"); measured
    # twice before and held back by the sample catalog's regression floor, which the exemption lifts.
    dense_veto_lift_one_part: float | None = 0.025
    dense_veto_rank_one_part: int | None = 3
    # In a message of several parts, a part's best entry gets a full body when it is also the
    # part's dense top (lift >= this) and in the top ``multipart_lexical_rank`` by BM25 or
    # keywords (0: not required; signals._agreement). > 2: off. Every leave-one-catalog-out fold
    # chooses 0.04 without the lexical rank, with example questions and without (docs/retrieval.md,
    # "Multi-part bodies re-chosen"; 0.02 and rank 3 until then).
    multipart_full_lift: float = 0.04
    multipart_lexical_rank: int = 0
    # The same for a message of one part (a paraphrase: few of its words are its entry's). > 2: off, as
    # every leave-one-catalog-out fold chose (docs/retrieval.md, "A full body for a first entry only the
    # meaning found").
    agreed_full_lift: float = 9.0
    agreed_lexical_rank: int = 3
    # A message of one part whose best entry is its dense top with lift >= ``agreed_example_lift`` gets
    # that entry in full when the question's cosine with the entry's closest accepted example question
    # is at least ``agreed_example_cosine`` (> 1: off): it is worded like a question the entry answers.
    # Never without accepted example questions.
    agreed_example_cosine: float = 9.0
    agreed_example_lift: float = 0.04
    # Share of its rank's fused score a keyword or BM25 hit below the full-body threshold keeps (1: all):
    # a paraphrase's few common words (a weak match) no longer tie the entry its meaning points at.
    # Chosen by leave-one-catalog-out (every fold of ten: 0.25; docs/retrieval.md, "Weak lexical hits").
    weak_lexical_factor: float = 0.25
    # In a message of several parts, the whole message's closest entry arrives in full when it is also
    # first in the merged ranking and stands at least this far above the catalog's mean cosine (> 2:
    # off; shaping._message_full). Per kind of vector, as ``dense_full_lift`` / ``dense_full_lift_examples``:
    # an entry with accepted example questions scores by the blend and its closest question, and its lifts
    # run otherwise. Chosen by leave-one-catalog-out on sixteen dev splits (docs/retrieval.md, "The whole
    # message decides bodies, for entries with example questions"): every fold picks 0.03 with
    # example questions; without them no setting gains held out, so off.
    message_full_lift: float = 9.0
    message_full_lift_examples: float = 0.03
    # In a message of several parts, when the whole message's closest entry stands less than this above the
    # catalog's mean cosine, the parts' keyword and BM25 full bodies are listed (0: off; shaping._message_floor).
    # Per kind of vector as above: every fold picks 0.022 with example questions, none without.
    message_lift_floor: float = 0.0
    message_lift_floor_examples: float = 0.022
    # A message with no part the UI context or an ID answered, closer to a background question (general
    # questions about everyday life and the world, background.py) than to any entry by at least this
    # much, gets no full body: what was found is listed (> 2: off; index.background_verdict). Per kind of
    # the message's closest entry, as ``dense_full_lift`` / ``dense_full_lift_examples``. Chosen by
    # leave-one-catalog-out on sixteen dev splits (docs/retrieval.md, "The background"): every fold picks
    # 0.09 without example questions; fifteen of sixteen pick 0.05 with them (the sample's fold: 0.06).
    background_margin: float = 0.09
    background_margin_examples: float = 0.05
    # The catalog's own out-of-scope questions: what its users ask that no entry answers, written or
    # accepted by curators (knowledge.models.OutOfScopeSet; `evaluate_retrieval --out-of-scope FILE`). They
    # are a background of the catalog's own: a message closer to one of them than to any entry by at least
    # the margin gets no full body (index.background_verdict; > 2: off), per kind of the closest entry.
    # Chosen by leave-one-catalog-out on sixteen dev splits, each with a stand-in model's proposals
    # (docs/retrieval.md, "Out-of-scope questions"): fifteen folds pick 0.06 without example questions
    # (energia's: 0.08), fourteen pick 0.05 with them (hospital's and university's: 0.04).
    out_of_scope: tuple[str, ...] = ()
    out_of_scope_margin: float = 0.06
    out_of_scope_margin_examples: float = 0.05
    # The whole message's meaning (weights["message"], index.message_meaning) read from its parts' cosines
    # (their mean: the cosine with the parts' mean vector, up to a factor the ranking ignores) instead of
    # one more embedding of the whole message.
    message_from_parts: bool = False
    # A strong keyword or BM25 hit whose full body the meaning check vetoed (``dense_veto_lift``) is
    # damped as a weak one is when the part's closest entry stands at least this far above the catalog's
    # mean cosine (9: never): words the question's meaning does not come near no longer outrank the entry
    # it points at. Chosen by leave-one-catalog-out, with and without example questions (docs/retrieval.md,
    # "Vetoed words count as weak"); ``weak_lexical_factor`` 1 leaves vetoed hits undamped too.
    vetoed_weak_lift: float = 0.025
    # The "questions" signal (signals._questions_signal; its weight is weights["questions"]): in a message
    # of one part, the entries whose accepted example questions' words score best (BM25+), at most
    # ``questions_top_k``, each at least ``questions_share`` of the best; with ``questions_typed_terms``
    # the words as typed count too (not only as the catalog's text knows them). Rank only: never a full
    # body. Top 1 with typed words: nine leave-one-catalog-out folds of ten (docs/retrieval.md, "The
    # example questions' words").
    questions_top_k: int = 1
    questions_share: float = 0.0
    questions_typed_terms: bool = True
    # The language the catalog is written in: the lexicon translates into it only.
    catalog_language: str = "pt"
    k1: float = 1.2
    b: float = 0.75
    delta: float = 1.0
