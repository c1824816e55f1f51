"""The background: general questions about everyday life and the world, none about any catalog.

An out-of-domain message ("Vai chover no fim de semana?") is about equally close to every entry
of a catalog, but the few words it shares with one ("fim de semana" in an opening-hours article)
or the closest entry's small lead can still hand that entry over in full. Set beside questions
nobody's catalog answers (weather, sport, recipes, homework, small talk…), such a message is
closer to one of them than to any entry: the router then gives no full body and lists what it
found (``RouterIndex.route``, ``shaping._background``), as a search engine's "no good match".

``data/background_questions.json``: 150 questions in Portuguese, each also in English and Spanish,
written for this purpose by an author who saw neither the router nor any labeled catalog, from a
brief naming only 25 everyday topics (listed by an engineer who had read the dev splits'
out-of-domain questions, weather and sport among them: docs/retrieval.md, "The background").
Each question is embedded as the router would embed it sent as a message (``as_routed``), once per process, and
once per machine: an on-disk cache under ``$CONTEXTO_VAR_DIR/embeddings``, as folder catalogs'
vectors are (``manage.py embed_packages`` fills it).

``questions_matrix`` embeds any such set the same way: a catalog's own out-of-scope questions
(``RouterConfig.out_of_scope``, kept by curators), judged by the same rule with their own margins.

Pure module: no Django.
"""

from __future__ import annotations

import json
import os
import threading
from functools import cache
from pathlib import Path

import numpy as np

from common.text import retrieval_embeddings

from .splitting import split_parts_analyzed

BACKGROUND_FILE = Path(__file__).resolve().parent / "data" / "background_questions.json"
LANGUAGES = ("pt", "en", "es")
_CACHE_KEY = "background-questions\n"
_OUT_OF_SCOPE_KEY = "out-of-scope-questions\n"
_KEPT_SETS = 8  # question sets kept per process: the background and a few catalogs' out-of-scope sets

_lock = threading.Lock()
_matrices: dict[tuple, np.ndarray] = {}  # (model id, embeddings cache generation, cache key, questions) → matrix


@cache
def background_questions() -> tuple[str, ...]:
    """Every background question, Portuguese first, then English, then Spanish."""
    data = json.loads(BACKGROUND_FILE.read_text(encoding="utf-8"))
    return tuple(q for lang in LANGUAGES for q in data[lang])


def as_routed(question: str) -> str:
    """The text the router would embed for ``question`` sent as a message: its one part (without the
    final "?"), or the whole message when it splits into several (index.background_verdict)."""
    parts = split_parts_analyzed(question)
    return parts[0][0] if len(parts) == 1 else question


def _var_cache():
    from .dense import EmbeddingCache  # dense imports this module

    root = Path(os.environ.get("CONTEXTO_VAR_DIR") or Path(__file__).resolve().parents[2] / "var")
    return EmbeddingCache(root / "embeddings")


def background_matrix() -> np.ndarray | None:
    """(questions × DIM) unit vectors of the background questions, embedded as questions; None when
    the models cannot run. Computed once per process: about 8 s of CPU the first time on a machine,
    then read from the on-disk cache (about 15 ms)."""
    return questions_matrix(background_questions(), _CACHE_KEY)


def questions_matrix(questions: tuple[str, ...], cache_key: str = _OUT_OF_SCOPE_KEY) -> np.ndarray | None:
    """(questions × DIM) unit vectors of ``questions`` embedded as the router embeds a message
    (``as_routed``), in the router's own model; None when the models cannot run or there are none.

    The background's, and a catalog's out-of-scope questions (``RouterConfig.out_of_scope``): kept per
    process for the last few sets, and on disk per machine, so a set is embedded once (about 50 ms of
    CPU per question) until its text or the model changes."""
    if not questions:
        return None
    key = (retrieval_embeddings.MODEL_ID, retrieval_embeddings.cache_generation(), cache_key, questions)
    matrix = _matrices.get(key)
    if matrix is not None:
        return matrix
    if not retrieval_embeddings.available():
        return None
    with _lock:
        matrix = _matrices.get(key)
        if matrix is None:
            routed = [as_routed(q) for q in questions]
            text = cache_key + "\n".join(routed)
            disk = _var_cache()
            matrix = disk.get(text, rows=len(routed))
            if matrix is None:
                try:
                    matrix = np.asarray(retrieval_embeddings.embed_queries(routed), dtype=np.float32)
                except retrieval_embeddings.EmbeddingsUnavailable:
                    return None
                try:
                    disk.put(text, matrix)
                except OSError:
                    pass  # a read-only var dir: embedded again by the next process
            stale = [k for k in _matrices if k[:2] != key[:2]]
            for k in stale + list(_matrices)[: max(len(_matrices) - _KEPT_SETS, 0)]:
                _matrices.pop(k, None)
            _matrices[key] = matrix
    return matrix
