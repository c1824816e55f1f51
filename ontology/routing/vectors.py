"""The training examples' sentence embeddings, computed at build time and committed.

Embedding every training text costs about a minute (~1,100 questions and ~600 chunks on
the 2-core machine), far too slow for each process start. ``manage.py
build_ontology_vectors`` embeds them once into ``ontology/data/vectors/``:

* ``<set>.npy`` — one float16 row per training text, in the order the model reads them
  (float16 halves the files; the classifiers' decisions don't move at that precision);
* ``manifest.json`` — the embedding model (``embeddings.MODEL_ID``), the sha256 of every
  source file, and a digest of the ordered texts.

At start a model loads its set only if the model id and the texts' digest match what it
is about to train on; otherwise it logs a warning and trains on the term features alone
(``tests/ontology/test_vectors.py`` fails when a source changed without a rebuild).

Pure module: no Django.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.text import embeddings

from .data import DATA_DIR

logger = logging.getLogger(__name__)

VECTORS_DIR = DATA_DIR / "vectors"
MANIFEST_FILE = VECTORS_DIR / "manifest.json"
REPO_ROOT = DATA_DIR.parent.parent


@dataclass(frozen=True)
class VectorSet:
    """A named set of training texts: where they come from and which side of e5 they are."""

    name: str
    kind: str  # "query" (questions) or "passage" (chunks)
    sources: Callable[[], Sequence[Path]]
    texts: Callable[[], list[str]]

    @property
    def path(self) -> Path:
        return VECTORS_DIR / f"{self.name}.npy"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        embed = embeddings.embed_queries if self.kind == "query" else embeddings.embed_passages
        return embed(list(texts))


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def texts_sha256(texts: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _relative(path: Path) -> str:
    path = path.resolve()
    return path.relative_to(REPO_ROOT).as_posix() if path.is_relative_to(REPO_ROOT) else path.as_posix()


def read_manifest() -> dict:
    if not MANIFEST_FILE.is_file():
        return {"sets": {}}
    return json.loads(MANIFEST_FILE.read_text(encoding="utf-8"))


def expected_entry(vector_set: VectorSet, texts: Sequence[str] | None = None) -> dict:
    """What the manifest must say of a set for its vectors to be current."""
    texts = vector_set.texts() if texts is None else texts
    return {
        "file": vector_set.path.name,
        "kind": vector_set.kind,
        "rows": len(texts),
        "texts_sha256": texts_sha256(texts),
        "sources": {_relative(p): file_sha256(p) for p in vector_set.sources()},
    }


def stale_reasons(vector_set: VectorSet) -> list[str]:
    """Why the committed vectors of a set don't match its sources (empty when current)."""
    manifest = read_manifest()
    entry = manifest.get("sets", {}).get(vector_set.name)
    if entry is None or not vector_set.path.is_file():
        return ["missing"]
    reasons = []
    if manifest.get("model_id") != embeddings.MODEL_ID:
        reasons.append("model_id")
    expected = expected_entry(vector_set)
    for key in ("rows", "texts_sha256", "sources"):
        if entry.get(key) != expected[key]:
            reasons.append(key)
    return reasons


def build(vector_sets: Sequence[VectorSet], *, batch: int = 32) -> dict[str, int]:
    """Embed every set's texts and write the files + manifest; returns rows per set."""
    VECTORS_DIR.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest()
    manifest["model_id"] = embeddings.MODEL_ID
    manifest["dim"] = embeddings.DIM
    manifest["dtype"] = "float16"
    sets = manifest.setdefault("sets", {})
    counts = {}
    for vector_set in vector_sets:
        texts = vector_set.texts()
        rows = [vector_set.embed(texts[i : i + batch]) for i in range(0, len(texts), batch)]
        matrix = np.vstack(rows) if rows else np.empty((0, embeddings.DIM))
        np.save(vector_set.path, matrix.astype(np.float16), allow_pickle=False)
        sets[vector_set.name] = expected_entry(vector_set, texts)
        counts[vector_set.name] = len(texts)
    manifest["sets"] = dict(sorted(sets.items()))
    MANIFEST_FILE.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return counts


def load(vector_set: VectorSet, texts: Sequence[str]) -> np.ndarray | None:
    """The committed float32 vectors of exactly `texts` (in that order), or None when the
    artifact is missing or was built from other texts or another model."""
    manifest = read_manifest()
    entry = manifest.get("sets", {}).get(vector_set.name)
    current = (
        entry is not None
        and manifest.get("model_id") == embeddings.MODEL_ID
        and entry.get("rows") == len(texts)
        and entry.get("texts_sha256") == texts_sha256(texts)
        and vector_set.path.is_file()
    )
    if not current:
        logger.warning("ontology vectors stale or missing", extra={"set": vector_set.name, "rows": len(texts)})
        return None
    matrix = np.load(vector_set.path, allow_pickle=False).astype(np.float32)
    if matrix.shape != (len(texts), embeddings.DIM):
        logger.warning("ontology vectors malformed", extra={"set": vector_set.name, "shape": list(matrix.shape)})
        return None
    return matrix
