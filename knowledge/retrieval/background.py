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

_lock = threading.Lock()
_matrices: dict[tuple[str, int], np.ndarray] = {}  # (model id, embeddings cache generation) → matrix


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
    key = (retrieval_embeddings.MODEL_ID, retrieval_embeddings.cache_generation())
    matrix = _matrices.get(key)
    if matrix is not None:
        return matrix
    if not retrieval_embeddings.available():
        return None
    with _lock:
        matrix = _matrices.get(key)
        if matrix is None:
            questions = [as_routed(q) for q in background_questions()]
            text = _CACHE_KEY + "\n".join(questions)
            disk = _var_cache()
            matrix = disk.get(text, rows=len(questions))
            if matrix is None:
                try:
                    matrix = np.asarray(retrieval_embeddings.embed_queries(questions), dtype=np.float32)
                except retrieval_embeddings.EmbeddingsUnavailable:
                    return None
                try:
                    disk.put(text, matrix)
                except OSError:
                    pass  # a read-only var dir: embedded again by the next process
            _matrices.clear()
            _matrices[key] = matrix
    return matrix
