"""The knowledge router's sentence vectors: e5 and USE joined into one vector.

Each text's vector is the concatenation of its multilingual-e5-small vector (`embeddings`,
384 dimensions, with e5's query/passage sides) scaled by sqrt(E5_SHARE) and its
USE-multilingual-v3 vector (`use_embeddings`, 512 dimensions) scaled by sqrt(1 - E5_SHARE).
Both parts are unit vectors, so the result is one too (896 dimensions), and the cosine of two
such vectors is the weighted mean of the two models' cosines:

    cos = E5_SHARE * cos_e5 + (1 - E5_SHARE) * cos_use

Why two models: they were trained differently (a transformer on retrieval pairs; a
deep-averaging network and an n-gram CNN on question-answer and translation pairs) and miss
different questions. Over the ten labeled catalogs' dev splits (in-sample: the share was chosen
on them) the combination puts the expected entry first, on the vectors alone, for 412 of 643 questions against 378 for e5 alone (paraphrases
59 -> 67 of 150, chat-style typos 52 -> 65 of 90), and the router's held-out objective rises on
every leave-one-catalog-out fold; on the test splits the router delivers more answers in full
(462 against 453 of 631) with hit@1 unchanged (docs/retrieval.md, "Two encoders"). E5_SHARE (0.92) is chosen by
leave-one-catalog-out with the lift thresholds that read these cosines: USE's cosines spread about
five times wider than e5's, so a small share already gives it about a third of the say.

Same interface as `embeddings` for what the router needs (MODEL_ID, DIM, enabled, available,
embed_query(ies), embed_passages). MODEL_ID names both models and the share: vectors stored
under another id (e5 alone, another share) are not comparable and are recomputed
(`manage.py embed_packages`). The ontology keeps e5 alone (`embeddings`): its classifier and
its thresholds were chosen on e5's vectors.

Pure module: no Django.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from . import embeddings, use_embeddings
from .embeddings import EmbeddingsUnavailable, enabled

__all__ = [
    "DIM",
    "E5_SHARE",
    "MODEL_ID",
    "EmbeddingsUnavailable",
    "available",
    "clear_cache",
    "embed_passages",
    "embed_queries",
    "embed_query",
    "enabled",
]

E5_SHARE = 0.92
DIM = embeddings.DIM + use_embeddings.DIM
MODEL_ID = f"{embeddings.MODEL_ID}+{use_embeddings.MODEL_ID}:e5={E5_SHARE}"

_E5_SCALE = math.sqrt(E5_SHARE)
_USE_SCALE = math.sqrt(1.0 - E5_SHARE)

_QUERY_CACHE_SIZE = 4096
_query_cache: OrderedDict[str, np.ndarray] = OrderedDict()  # guarded by e5's cache lock (through_cache)


def available() -> bool:
    """True when both models can run in this process: a vector needs both halves."""
    return embeddings.available() and use_embeddings.available()


def _join(e5: np.ndarray, use: np.ndarray) -> np.ndarray:
    out = np.empty((len(e5), DIM), dtype=np.float32)
    out[:, : embeddings.DIM] = e5 * _E5_SCALE
    out[:, embeddings.DIM :] = use * _USE_SCALE
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def embed_queries(texts: Sequence[str]) -> np.ndarray:
    """(len(texts), DIM) float32 unit vectors for questions; cached per text (e5's half is also
    served from e5's own question cache, which the ontology's classifier fills)."""
    if not available():
        raise EmbeddingsUnavailable("sentence embeddings are disabled or a model could not load")

    def compute(todo: list[str]) -> np.ndarray:
        return _join(embeddings.embed_queries(todo), use_embeddings.embed(todo, max_chars=embeddings.QUERY_MAX_CHARS))

    clipped = [(text or " ")[: embeddings.QUERY_MAX_CHARS] for text in texts]
    return embeddings.through_cache(clipped, _query_cache, _QUERY_CACHE_SIZE, compute, dim=DIM)


def embed_query(text: str) -> np.ndarray:
    """One question's (DIM,) unit vector."""
    return embed_queries([text])[0]


def embed_passages(texts: Sequence[str], *, max_chars: int = embeddings.PASSAGE_MAX_CHARS) -> np.ndarray:
    """(len(texts), DIM) float32 unit vectors for searchable texts (not cached: store them)."""
    if not available():
        raise EmbeddingsUnavailable("sentence embeddings are disabled or a model could not load")
    if not texts:
        return np.empty((0, DIM), dtype=np.float32)
    return _join(
        embeddings.embed_passages(texts, max_chars=max_chars), use_embeddings.embed(texts, max_chars=max_chars)
    )


_generation = 0  # bumped by clear_cache: what was computed from the models before may be stale


def cache_generation() -> int:
    """How many times ``clear_cache`` ran: vectors a caller keeps (knowledge.retrieval.background) are
    valid for one generation (a test swaps the models and clears)."""
    return _generation


def clear_cache() -> None:
    """Forget cached question vectors, here and e5's (tests)."""
    global _generation
    _generation += 1
    embeddings.clear_cache()
    embeddings.forget(_query_cache)
