"""Stored passage vectors for the router's dense signal: one per package revision.

A revision's vector is computed once, when it is written (``embedding_request``
enqueues ``knowledge.embed_revision`` on commit), or in bulk by
``embedding_backfill`` (``manage.py embed_packages``, and ``scripts/run``'s
catalog load); ``embedding_sweep`` (Celery beat) catches revisions left without
one of the current model (a lost task, a model upgrade). Never per request: the
router reads the stored vectors of the current revisions with the catalog
(``knowledge.catalog``). Vectors of another
model are ignored and recomputed. With CONTEXTO_EMBEDDINGS=off or the model
missing nothing is computed and the router works without the signal.

A revision with accepted example questions (``knowledge.search_terms``) is
embedded as its passage blended with their mean (``dense.with_examples``), and
the questions' own vectors are stored beside it (``example_vectors``: the router
also scores the entry by its closest example question); its digest covers the
questions, so accepting new ones re-embeds it (``search_terms_accept`` enqueues
the task; the beat sweep catches a lost one).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q

from common.text import retrieval_embeddings
from knowledge.models import CatalogState, Package, PackageRevision, RevisionEmbedding, RevisionSearchTerms
from knowledge.retrieval.dense import embedded_text, passage_text, text_digest, with_examples
from knowledge.services import catalog_version_bump

logger = logging.getLogger(__name__)

BACKFILL_BATCH = 16
# Revisions a sweep embeds at most (~0.1 s each): a run stays well inside a task's time limit.
SWEEP_LIMIT = 500


def revision_text(revision: PackageRevision) -> str:
    """What the revision is embedded as (``dense.passage_text`` of its snapshot)."""
    data = revision.data or {}
    return passage_text(
        SimpleNamespace(
            title=data.get("title", ""),
            summary=data.get("summary", ""),
            keywords=data.get("keywords", []),
            body=data.get("body", ""),
        )
    )


def _enabled() -> bool:
    return bool(getattr(settings, "KNOWLEDGE_EMBED_ON_SAVE", True)) and retrieval_embeddings.enabled()


def embedding_request(revision: PackageRevision) -> None:
    """After the revision's transaction commits, compute its vector (Celery) unless its content is already embedded."""
    if not _enabled() or not (revision.data or {}).get("body", "").strip():
        return
    from knowledge.tasks import embed_revision

    # robust: the revision is committed whatever happens here; a broker outage, or a failure of the
    # embedding itself when tasks run eagerly, is logged and left to the beat sweep (`embedding_sweep`)
    # or `embed_packages` (the router simply lacks this package's dense signal until then) instead of
    # failing the saved request.
    transaction.on_commit(lambda: embed_revision.delay(revision.pk), robust=True)


def _store(pairs: list[tuple[PackageRevision, str, Embedded]]) -> int:
    """Save vectors; bump the catalog version when a current revision got one (processes rebuild with it)."""
    if not pairs:
        return 0
    with transaction.atomic():
        CatalogState.objects.get_or_create(pk=1)
        CatalogState.objects.select_for_update().get(pk=1)
        current = False
        for revision, digest, (vector, examples) in pairs:
            # Replaced, never updated in place: the catalog reload notices new vectors by the
            # rows' count and last id (knowledge/catalog.py), so a vector written again gets a new id.
            RevisionEmbedding.objects.filter(revision=revision).delete()
            RevisionEmbedding.objects.create(
                revision=revision,
                model_id=retrieval_embeddings.MODEL_ID,
                text_digest=digest,
                vector=np.asarray(vector, dtype="<f4").tobytes(),
                example_vectors=examples,
            )
            current = (
                current or Package.objects.filter(pk=revision.package_id, revision_number=revision.number).exists()
            )
        if current:
            catalog_version_bump()
    return len(pairs)


def accepted_questions(revisions: list[PackageRevision]) -> dict[int, list[str]]:
    """revision pk → the example questions a curator accepted for it (knowledge/search_terms.py)."""
    rows = RevisionSearchTerms.objects.filter(
        revision__in=revisions, status=RevisionSearchTerms.Status.ACCEPTED
    ).values_list("revision_id", "accepted_questions")
    return {pk: list(questions) for pk, questions in rows if questions}


# A revision to embed: (revision, passage text, digest of what the vector stands for, example questions).
Pending = tuple[PackageRevision, str, str, list[str]]


def _pending(revisions: list[PackageRevision]) -> list[Pending]:
    have = {
        (e.revision_id, e.text_digest)
        for e in RevisionEmbedding.objects.filter(revision__in=revisions, model_id=retrieval_embeddings.MODEL_ID)
    }
    asked = accepted_questions(revisions)
    out = []
    for revision in revisions:
        text = revision_text(revision)
        questions = asked.get(revision.pk, [])
        # Without example questions the digest is the passage's, as it always was.
        digest = text_digest(embedded_text(text, questions))
        if (revision.pk, digest) not in have:
            out.append((revision, text, digest, questions))
    return out


# What a revision is stored as: its vector, and its example questions' vectors (float32 bytes, b"" without any).
Embedded = tuple[np.ndarray, bytes]


def _known(digests: list[str]) -> dict[str, tuple[bytes, bytes]]:
    """Vectors already computed for these texts (an activation or revert repeats a text): reused, not
    recomputed. A row whose questions' vectors are missing is not reused (stored before they were kept)."""
    rows = RevisionEmbedding.objects.filter(model_id=retrieval_embeddings.MODEL_ID, text_digest__in=digests)
    return {
        digest: (bytes(vector), bytes(examples))
        for digest, vector, examples in rows.values_list("text_digest", "vector", "example_vectors")
    }


def _vectors(pending: list[Pending]) -> list[Embedded]:
    known = _known([digest for _, _, digest, _ in pending])
    usable = {
        j
        for j, (_, _, digest, questions) in enumerate(pending)
        if digest in known and (known[digest][1] or not questions)
    }
    missing = [j for j in range(len(pending)) if j not in usable]
    fresh = retrieval_embeddings.embed_passages([pending[j][1] for j in missing]) if missing else []
    computed: dict[int, Embedded] = {}
    for j, vector in zip(missing, fresh):
        questions = pending[j][3]
        if questions:
            rows = np.asarray(retrieval_embeddings.embed_queries(questions), dtype="<f4")
            computed[j] = (with_examples(vector, rows), rows.tobytes())
        else:
            computed[j] = (vector, b"")
    out: list[Embedded] = []
    for j, (_, _, digest, _) in enumerate(pending):
        if j in computed:
            out.append(computed[j])
        else:
            vector, examples = known[digest]
            out.append((np.frombuffer(vector, dtype="<f4"), examples))
    return out


def revision_embedding_compute(*, revision_pk: int) -> bool:
    """Embed one revision (idempotent: a stored vector of this model and text is kept). True when one was written."""
    revision = PackageRevision.objects.filter(pk=revision_pk).first()
    if revision is None or not retrieval_embeddings.available():
        return False
    pending = _pending([revision])
    if not pending:
        return False
    started = time.perf_counter()
    vector = _vectors(pending)[0]  # outside any transaction: the slow part
    _store([(revision, pending[0][2], vector)])
    logger.info("knowledge.revision_embedded revision=%s ms=%.0f", revision.pk, (time.perf_counter() - started) * 1000)
    return True


def _embed_revisions(revisions: list[PackageRevision], batch: int) -> tuple[int, int]:
    """Embed and store the revisions' passages that lack a vector of this model and text:
    (how many were written, how many already had one)."""
    pending = _pending(revisions)
    embedded = 0
    for start in range(0, len(pending), batch):
        chunk = pending[start : start + batch]
        vectors = _vectors(chunk)
        embedded += _store([(revision, digest, vectors[j]) for j, (revision, _, digest, _) in enumerate(chunk)])
    return embedded, len(revisions) - len(pending)


def _current_revisions():
    return PackageRevision.objects.filter(package__is_active=True, number=F("package__revision_number"))


def _with_body(revisions) -> list[PackageRevision]:
    return [r for r in revisions if (r.data or {}).get("body", "").strip()]


def embedding_backfill(*, batch: int = BACKFILL_BATCH) -> dict[str, int]:
    """Vectors for every active package's current revision that lacks one of this model; counts."""
    if not retrieval_embeddings.available():
        return {"embedded": 0, "skipped": 0, "unavailable": 1}
    revisions = _with_body(_current_revisions().select_related("package"))
    started = time.perf_counter()
    embedded, skipped = _embed_revisions(revisions, batch)
    logger.info(
        "knowledge.embedding_backfill embedded=%d skipped=%d ms=%.0f",
        embedded,
        skipped,
        (time.perf_counter() - started) * 1000,
    )
    return {"embedded": embedded, "skipped": skipped, "unavailable": 0}


def embedding_sweep(*, limit: int = SWEEP_LIMIT, batch: int = BACKFILL_BATCH) -> dict[str, int]:
    """Vectors for active current revisions that have none of this model, at most ``limit`` a run
    (Celery beat runs it every ``KNOWLEDGE_EMBED_SWEEP_INTERVAL`` seconds): a save whose task never
    reached a worker (broker down: the save stands, ``embedding_request``), every revision after
    an upgrade that changed the router's model, or a vector older than the example questions
    accepted for its revision since. One query when nothing is missing; unlike
    ``embedding_backfill`` it reads only the revisions that need a vector, not every body."""
    if not _enabled() or not retrieval_embeddings.available():
        return {"embedded": 0, "missing": 0, "unavailable": 1}
    # No vector of this model, or one older than the example questions a curator accepted since
    # (the re-embedding task after the accept was lost).
    stale = Q(
        search_terms__status=RevisionSearchTerms.Status.ACCEPTED,
        search_terms__questions_changed_at__gt=F("embedding__created_at"),
    )
    missing = (
        _current_revisions()
        .filter(~Q(embedding__model_id=retrieval_embeddings.MODEL_ID) | stale)
        .exclude(data__body="")
        .select_related("package")
        .order_by("pk")
    )
    revisions = _with_body(missing[:limit])
    if not revisions:
        return {"embedded": 0, "missing": 0, "unavailable": 0}
    started = time.perf_counter()
    embedded, _ = _embed_revisions(revisions, batch)
    logger.info(
        "knowledge.embedding_sweep embedded=%d missing=%d ms=%.0f",
        embedded,
        len(revisions),
        (time.perf_counter() - started) * 1000,
    )
    return {"embedded": embedded, "missing": len(revisions), "unavailable": 0}


def catalog_vector_rows(chunk_size: int = 2000) -> Iterator[tuple[str, bytes, bytes]]:
    """(package ID, stored vector, its example questions' vectors) of every active package's current
    revision, this model's only, streamed from the database in no particular order and never held
    (``index_store`` writes the shared vectors file from them): what ``catalog_vectors`` gives the
    active catalog."""
    return (
        _current_vectors(revision__package__is_active=True)
        .values_list("revision__package__package_id", "vector", "example_vectors")
        .iterator(chunk_size=chunk_size)
    )


def _current_vectors(**packages):
    """Stored vectors of this model for the current revisions (not the history) of the packages
    ``packages`` filters: one definition for the catalog's load and the shared file's writer, whose
    keys must agree."""
    return RevisionEmbedding.objects.filter(
        revision__number=F("revision__package__revision_number"),
        model_id=retrieval_embeddings.MODEL_ID,
        **packages,
    )


def catalog_vectors(
    packages: list[Package], examples: dict[str, bytes | memoryview] | None = None
) -> dict[str, memoryview]:
    """package_id → stored vector of its current revision (this model's only), as a byte view (format
    'B', equal to the stored bytes) into one matrix of this load. With ``examples``, the same rows'
    example-question vectors are put there too (package_id → byte view into one block of this load;
    revisions without accepted example questions have none).

    One allocation for all of them, not one bytes object per package: once the router's dense index
    holds the vectors, the catalog swaps these views for views into its matrix (``Catalog.hold_vectors``)
    and this matrix is returned to the system whole (100,000 small objects would stay in the heap;
    10,000 entries' example rows, 32 KB each with nine questions, measured 322 MB kept by the heap
    after they were freed: ``bench/bench_dense_memory.py --example-questions 9``)."""
    by_pk = {p.pk: p for p in packages}
    rows = (
        _current_vectors(revision__package__in=packages)
        .values_list("revision__package_id", "vector", "example_vectors")
        .iterator(chunk_size=2000)
    )
    width = retrieval_embeddings.DIM * 4
    matrix = np.zeros((len(by_pk), width), dtype=np.uint8)
    filled: dict[str, int] = {}
    other: dict[str, bytes] = {}  # another size than the model's (never ranked): kept as they were
    pool, spans = bytearray(), {}  # the example rows, one after another, and each package's span
    for package_pk, vector, example_rows in rows:
        package_id = by_pk[package_pk].package_id
        if examples is not None and example_rows:
            spans[package_id] = (len(pool), len(pool) + len(example_rows))
            pool += example_rows
        if len(vector) == width and package_id not in other:
            matrix[filled.setdefault(package_id, len(filled))] = np.frombuffer(vector, dtype=np.uint8)
        elif package_id not in filled:
            other[package_id] = bytes(vector)
    if spans:
        block = memoryview(pool)  # from now on the pool cannot grow: the views stay valid
        examples.update((pid, block[start:end]) for pid, (start, end) in spans.items())
    if not filled:
        return other
    if len(filled) < len(matrix) // 2:
        matrix = matrix[: len(filled)].copy()  # most packages without one: do not keep the empty rows
    data = memoryview(matrix).cast("B")
    return {**other, **{pid: data[i * width : (i + 1) * width] for pid, i in filled.items()}}
