"""What the router delivers for every labeled question, as comparable data.

The speed work must not change a single delivered result: this module routes
every question of the labeled sets (knowledge/evaluation/queries*.json and the
catalogs' dev and test files) and computes, per question, the delivered ids in
order per shape, each entry's `why`, score and body digest, and the part
rankings. The file keeps that compactly (`compact`): the ids delivered in full
and listed, readable in a failure, and a SHA-256 of the whole outcome, so a
difference in any score, reason or ranking still fails while the file stays
small. Test questions are only routed and compared here, never read for
tuning.

The sentence-embedding engine's float results differ slightly between CPUs
(its SIMD kernels: cosines move in the fourth decimal, enough to swap two
close candidates), so the snapshot is recorded and compared with a
deterministic stand-in (``deterministic_embeddings``: hashed character
trigrams, float64, no engine): it exercises every dense code path and gives
the same vectors on every machine. What the real model buys is measured by
``evaluate_retrieval`` and the dev-figure tests, not here.

Regenerate (only when a change is *meant* to alter results) with:

    .venv/bin/python -m tests.knowledge.router.route_snapshot
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOT = Path(__file__).resolve().parent / "data" / "route_snapshot.json"
EVALUATION = ROOT / "knowledge" / "evaluation"


STAND_IN_MODEL = "trigram-hash-stand-in"


def stand_in_vector(text: str, kind: str, dim: int | None = None) -> np.ndarray:
    """A unit vector from the folded text's hashed character trigrams (deterministic on any CPU)."""
    from common.text import embeddings
    from common.text.folding import fold_lower

    dim = dim or embeddings.DIM
    vector = np.zeros(dim, dtype=np.float64)
    for word in fold_lower(text).split():
        padded = f" {word} "
        for i in range(len(padded) - 2):
            h = zlib.crc32(padded[i : i + 3].encode())
            vector[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    vector[zlib.crc32(kind.encode()) % dim] += 0.5  # queries and passages differ, as e5's prefixes
    norm = float(np.sqrt((vector * vector).sum()))
    return (vector / norm if norm else vector).astype(np.float32)


class _StandInModel:
    def query(self, texts):
        return [stand_in_vector(t, "query") for t in texts]

    def passage(self, texts):
        return [stand_in_vector(t, "passage") for t in texts]


class _StandInUse:
    """USE's stand-in: symmetric (no query/passage side), its own dimension."""

    def encode(self, texts):
        from common.text import use_embeddings

        return np.stack([stand_in_vector(t, "use", use_embeddings.DIM) for t in texts])


@contextlib.contextmanager
def deterministic_embeddings() -> Iterator[None]:
    """Route with the stand-in model instead of the engine (and no on-disk vector cache)."""
    import os

    from common.text import embeddings, retrieval_embeddings, use_embeddings
    from knowledge import offline_catalog
    from knowledge.retrieval import background

    saved = (dict(embeddings._state), offline_catalog.embedding_cache, os.environ.get("CONTEXTO_EMBEDDINGS"))
    saved_use, saved_background = dict(use_embeddings._state), background.background_matrix
    saved_questions = background.questions_matrix
    retrieval_embeddings.clear_cache()
    embeddings._state.update(model=_StandInModel(), failed=False)
    use_embeddings._state.update(model=_StandInUse(), failed=False)
    offline_catalog.embedding_cache = lambda: None
    # No background (knowledge/retrieval/background.py): the stand-in's cosines carry no meaning, and
    # measured against them its verdict takes the bodies of a third of the questions, hiding the paths
    # this snapshot is for. The background has its own tests (tests/knowledge/retrieval/test_background.py).
    background.background_matrix = lambda: None
    # Nor out-of-scope questions in the router's model's space (a catalog's own background, the same
    # rule): none is embedded by the stand-in, and none is written to the on-disk vector cache.
    background.questions_matrix = lambda questions, cache_key=None: None
    os.environ["CONTEXTO_EMBEDDINGS"] = "on"
    try:
        yield
    finally:
        retrieval_embeddings.clear_cache()
        embeddings._state.update(saved[0])
        use_embeddings._state.update(saved_use)
        offline_catalog.embedding_cache = saved[1]
        background.background_matrix = saved_background
        background.questions_matrix = saved_questions
        if saved[2] is None:
            os.environ.pop("CONTEXTO_EMBEDDINGS", None)
        else:
            os.environ["CONTEXTO_EMBEDDINGS"] = saved[2]


def question_sets() -> list[tuple[str, Path, Path]]:
    """(name, catalog folder, question file) for every labeled set."""
    sample = ROOT / "knowledge" / "catalog"
    sets = [(p.name, sample, p) for p in sorted(EVALUATION.glob("queries*.json"))]
    for folder in sorted((EVALUATION / "catalogs").iterdir()):
        catalog = folder / "packages" if (folder / "packages").is_dir() else sample
        for split in ("dev", "test"):
            path = folder / f"questions.{split}.json"
            if path.exists():
                sets.append((f"{folder.name}/{split}", catalog, path))
    return sets


def _delivered(d) -> dict[str, Any]:
    return {
        "id": d.id,
        "shape": d.shape,
        "score": round(d.score, 6),
        "why": d.why,
        "revision": d.revision,
        "body": hashlib.sha1(d.body.encode()).hexdigest()[:12] if d.body else None,
    }


def outcome(result) -> dict[str, Any]:
    return {
        "parts": result.parts,
        "full": [_delivered(d) for d in result.full],
        "listed": [_delivered(d) for d in result.listed],
        "procedures": [_delivered(d) for d in result.procedures],
        "rules": [_delivered(d) for d in result.rules],
        "cascade": result.cascade,
        "part_keys": result.part_keys,
        "part_rankings": result.part_rankings,
        "used_tokens": result.used_tokens,
    }


def outcome_digest(row: dict[str, Any]) -> str:
    """SHA-256 of one question's whole outcome (canonical JSON)."""
    canonical = json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def compact(collected: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """What the snapshot file holds: per question the ids in full and listed, and the outcome's digest."""
    return {
        name: [
            {
                "query": row["query"],
                "full": [d["id"] for d in row["full"]],
                "listed": [d["id"] for d in row["listed"]],
                "digest": outcome_digest(json.loads(json.dumps(row, ensure_ascii=False))),
            }
            for row in rows
        ]
        for name, rows in collected.items()
    }


def collect(build_index=None) -> dict[str, list[dict[str, Any]]]:
    """Every labeled question's delivered result, per set (``build_index(folder)`` makes a catalog's index),
    with the deterministic stand-in for the embedding engine."""
    with deterministic_embeddings():
        return _collect(build_index)


def route_row(index, row: dict):
    """Route one labeled question (its UI context included) as the service would, without feedback."""
    from knowledge.routing_service import SemanticContext

    ctx = SemanticContext.coerce(row.get("context"))
    # related_feedback given (empty) so the part rankings the service uses are computed too.
    return index.route(
        row["query"],
        focus=ctx.focus,
        parents=ctx.parents,
        page=ctx.page,
        feedback={},
        related_feedback=lambda part, ranking: {},
    )


def _collect(build_index=None) -> dict[str, list[dict[str, Any]]]:
    from knowledge.offline_catalog import folder_index
    from knowledge.routing_service import router_config

    build_index = build_index or (lambda folder: folder_index(folder, router_config()))
    indexes: dict[Path, Any] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for name, catalog, path in question_sets():
        index = indexes.get(catalog)
        if index is None:
            index = indexes[catalog] = build_index(catalog)
        rows = []
        for row in json.loads(path.read_text(encoding="utf-8")):
            rows.append({"query": row["query"], **outcome(route_row(index, row))})
        out[name] = rows
    return out


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

    django.setup()
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(
        json.dumps(compact(collect()), ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8"
    )
    print(f"wrote {SNAPSHOT}")
