"""Weighted reciprocal rank fusion and token estimates."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

DEFAULT_WEIGHTS: dict[str, float] = {
    # An ID or alias the user typed is the strongest evidence there is.
    "id": 6.0,
    # The UI element in focus is documented by this entry.
    "semantic": 4.0,
    # Curated keywords are precise but short; above raw BM25.
    "keyword": 2.0,
    "bm25": 2.0,
    # Entries a curator fetched after seeing them listed for this question.
    "feedback": 3.0,
    # Parents of the focus and the page: context, not an answer.
    "semantic_parent": 1.5,
    "semantic_page": 0.8,
    # One hop from a strong hit, damped further by the hop itself.
    "wikilink": 0.6,
    # Sentence-embedding similarity (knowledge/retrieval/dense.py): meaning beyond shared words.
    # Chosen by leave-one-catalog-out over the dev splits (docs/retrieval.md, "Dense signal").
    "dense": 2.0,
    # The dense top entry when it stands clear of the runner-up (RouterConfig.dense_margin).
    # Chosen by leave-one-catalog-out over the dev splits (docs/retrieval.md, "Dense margin").
    "dense_margin": 3.0,
    # Entries whose accepted example questions share the message's words (one-part messages only).
    # Chosen by leave-one-catalog-out over the dev splits (docs/retrieval.md, "The example questions' words").
    "questions": 1.0,
    # A message of several parts: the entries closest in meaning to the whole message, added to the
    # merged ranking (rank only; index.message_meaning). Chosen by leave-one-catalog-out over the dev
    # splits (docs/retrieval.md, "The whole message's meaning"); 0: off.
    "message": 3.0,
    # The whole message's closest entry, ranked once more (rank only, as "message"). Chosen by
    # leave-one-catalog-out (docs/retrieval.md, "The whole message's closest entry"); 0: off.
    "message_top": 1.0,
}
DEFAULT_RRF_K = 5


def weighted_rrf(
    rankings: Mapping[str, Sequence[str]],
    weights: Mapping[str, float],
    k: float = DEFAULT_RRF_K,
) -> dict[str, float]:
    """Σ_signal weight / (k + rank), rank starting at 1; unknown signals weigh 0.

    A small k (5 rather than the classic 60) keeps first place clearly ahead:
    catalogs are small and each signal's list is short.
    """
    fused: dict[str, float] = {}
    get = fused.get
    for signal, ranked in rankings.items():
        weight = weights.get(signal, 0.0)
        if not weight:
            continue
        for key, step in zip(ranked, rrf_steps(weight, k, len(ranked))):
            fused[key] = get(key, 0.0) + step
    return fused


# (weight, k) -> [weight / (k + rank) for rank 1, 2, …]: a route fuses ~80 ranked entries with the
# same few weights, so each step is divided once per process. Bounded: weights come from settings.
_RRF_STEPS: dict[tuple[float, float], list[float]] = {}
_RRF_STEPS_MAX = 1024


def rrf_steps(weight: float, k: float, n: int) -> list[float]:
    """``weight / (k + rank)`` for ranks 1 to at least ``n``: the same divisions, worked out once."""
    steps = _RRF_STEPS.get((weight, k))
    if steps is None or len(steps) < n:
        steps = [weight / (k + rank) for rank in range(1, max(n, 64) + 1)]
        if len(_RRF_STEPS) < _RRF_STEPS_MAX:
            _RRF_STEPS[(weight, k)] = steps
    return steps


def estimate_tokens(text: str) -> int:
    """Tokens a BPE model would use, without downloading a tokenizer.

    Portuguese prose runs at about 4 characters or 0.75 words per token in
    the common BPE vocabularies; taking the larger of both estimates errs on
    the side of fitting under the budget.
    """
    if not text:
        return 0
    # str.split() splits on exactly the characters regex \s matches (str.isspace): the same word
    # count as re.findall(r"\S+"), about five times faster.
    return max(math.ceil(len(text) / 4), math.ceil(len(text.split()) * 4 / 3))


def estimate_tokens_many(chars: np.ndarray, words: np.ndarray) -> np.ndarray:
    """``estimate_tokens`` of many texts from their lengths and word counts (``len(text.split())``), as int32.

    The same float operations as ``estimate_tokens`` (an int over 4, an int times 4 over 3, each
    rounded up), so every value is equal; an empty text (no characters) is 0.
    """
    chars = np.asarray(chars, dtype=np.int64)
    words = np.asarray(words, dtype=np.int64)
    tokens = np.maximum(np.ceil(chars / 4), np.ceil(words * 4 / 3))
    return np.where(chars > 0, tokens, 0).astype(np.int32)
