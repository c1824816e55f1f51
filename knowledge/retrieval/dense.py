"""The dense signal: sentence-embedding similarity between a question and each entry.

Words alone miss a paraphrase ("Se eu pagar a mais, em quantos dias sai o
resultado?" shares no word with "Prazos de entrega"), a chat-style typo, or a
question in another language; multilingual sentence embeddings
(``common.text.retrieval_embeddings``: multilingual-e5-small joined with
USE-multilingual v3) place them near the entry they mean. This module holds
an (entries × 896) float32 matrix aligned
with the index's entries and ranks entries by cosine; the ranking is fused by
the router's weighted RRF like every other signal (``signals._dense_signal``).

Passage vectors are computed when a revision is written (stored with it, see
``knowledge.embeddings``) or, for a folder of packages, in memory through an
on-disk cache keyed by sha256(model id + text) (``EmbeddingCache``); never per
request. Only the question is embedded per request (cached per exact text by
``common.text.retrieval_embeddings``). An entry without a vector simply lacks the signal.

Pure module: no Django.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from common.text import retrieval_embeddings

# What an entry is embedded as: chosen on the dev splits (docs/retrieval.md, "Dense signal").
# The whole body (1,500 chars) was worse and 3x slower: the body dilutes what the entry is about.
PASSAGE_BODY_CHARS = 300


def passage_text(entry, body_chars: int = PASSAGE_BODY_CHARS) -> str:
    """'title. summary keywords. first body characters': what the entry is about, in its own words."""
    keywords = ", ".join(entry.keywords)
    head = f"{entry.title}. {entry.summary} {keywords}".strip()
    body = " ".join((entry.body or "").split())[:body_chars]
    return f"{head}. {body}" if body else head


def text_digest(text: str, model_id: str = retrieval_embeddings.MODEL_ID) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


class DenseIndex:
    """Unit vectors of a catalog's entries (rows of entries without one are zero and never ranked)."""

    def __init__(
        self,
        vectors: np.ndarray,
        present: np.ndarray,
        *,
        embed_query: Callable[[str], np.ndarray] | None = None,
        model_id: str = retrieval_embeddings.MODEL_ID,
    ):
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self.present = np.asarray(present, dtype=bool)
        self.has_any = bool(self.present.any())
        self.model_id = model_id
        self._embed_query = embed_query or retrieval_embeddings.embed_query

    @classmethod
    def from_rows(cls, rows: Sequence[np.ndarray | None], **kwargs) -> DenseIndex:
        """One vector (or None) per entry, in the index's entry order."""
        matrix = np.zeros((len(rows), retrieval_embeddings.DIM), dtype=np.float32)
        present = np.zeros(len(rows), dtype=bool)
        for i, row in enumerate(rows):
            if row is not None and len(row) == retrieval_embeddings.DIM:
                matrix[i] = row
                present[i] = True
        return cls(matrix, present, **kwargs)

    def __len__(self) -> int:
        return len(self.present)

    def query_vector(self, text: str) -> np.ndarray | None:
        """The question's vector, or None when the model cannot run (the router then goes without)."""
        try:
            return self._embed_query(text)
        except retrieval_embeddings.EmbeddingsUnavailable:
            return None

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """Cosine of every entry with the question (−1 for entries without a vector)."""
        sims = self.matrix @ np.asarray(vector, dtype=np.float32)
        sims[~self.present] = -1.0
        return sims

    def top_k(self, vector: np.ndarray, k: int) -> tuple[list[tuple[int, float]], float]:
        """The k most similar entries that have a vector, best first (ties: catalog order), and the mean cosine."""
        sims = self.similarities(vector)
        k = min(k, int(self.present.sum()))
        if k <= 0:
            return [], 0.0
        mean = float(sims[self.present].mean())
        if k < len(sims):
            cut = np.argpartition(-sims, k - 1)[:k]
        else:
            cut = np.arange(len(sims))
        order = cut[np.lexsort((cut, -sims[cut]))]
        return [(int(i), float(sims[i])) for i in order if self.present[i]], mean


class EmbeddingCache:
    """Passage vectors on disk, one .npy per sha256(model id + text): a folder is embedded once.

    For catalogs measured from a folder (``evaluate_retrieval --catalog``, tuning,
    tests); the database catalog stores its vectors with each revision instead.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _path(self, digest: str) -> Path:
        return self.directory / digest[:2] / f"{digest}.npy"

    def get(self, text: str) -> np.ndarray | None:
        path = self._path(text_digest(text))
        try:
            vector = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        return vector if vector.shape == (retrieval_embeddings.DIM,) else None

    def put(self, text: str, vector: np.ndarray) -> None:
        path = self._path(text_digest(text))
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename: a concurrent reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.asarray(vector, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, path)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), DIM) vectors, computing (and storing) only the ones not cached yet."""
        out = np.zeros((len(texts), retrieval_embeddings.DIM), dtype=np.float32)
        missing = []
        for i, text in enumerate(texts):
            cached = self.get(text)
            if cached is None:
                missing.append(i)
            else:
                out[i] = cached
        if missing:
            fresh = retrieval_embeddings.embed_passages([texts[i] for i in missing])
            for row, i in enumerate(missing):
                out[i] = fresh[row]
                self.put(texts[i], fresh[row])
        return out


def folder_dense_index(
    entries: Sequence, cache: EmbeddingCache | None, *, body_chars: int | None = None, **kwargs
) -> DenseIndex | None:
    """A DenseIndex for in-memory entries (vectors from the cache, else computed); None when the model is off."""
    if not entries or not retrieval_embeddings.available():
        return None
    texts = [passage_text(e, PASSAGE_BODY_CHARS if body_chars is None else body_chars) for e in entries]
    if cache is None:
        vectors = retrieval_embeddings.embed_passages(texts)
    else:
        vectors = cache.passages(texts)
    return DenseIndex(vectors, np.ones(len(entries), dtype=bool), **kwargs)
