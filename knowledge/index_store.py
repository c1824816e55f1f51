"""Where a process gets its router index: a shared memory-mapped segment, a delta, or a build.

`knowledge.routing_service.RouterIndexHolder` decides *when* (a catalog
version or settings change); this module decides *how*:

- `shared_index_build`: the index of a catalog over the segment of its
  content under ``KNOWLEDGE_INDEX_DIR``. The first process to need a segment
  builds it under the segment's lock (an ``fcntl`` lock file: processes of
  one host, which is what shares a page cache); the others wait on the lock,
  then map the written files. Old segments are collected after each write.
  Without ``KNOWLEDGE_INDEX_DIR`` (None) the index is built in memory, as
  before (tests, one-off scripts);
- `delta_index`: a catalog that differs from the current index's base by at
  most ``KNOWLEDGE_INDEX_DELTA_MAX`` entries is served by the base plus a
  delta (``knowledge.retrieval.delta``), built in milliseconds; the full
  build of the new content (*compaction*) then runs in the background;
- `catalog_dense`: the dense signal's entry vectors, mapped from one shared
  file per content (``knowledge.retrieval.dense_segment``), overlaid by a
  delta's edits, and held by the catalog as views instead of a second copy.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from django.conf import settings

from common.text import retrieval_embeddings
from knowledge import metrics
from knowledge.retrieval.delta import index_with_edits
from knowledge.retrieval.dense import DenseIndex
from knowledge.retrieval.dense_segment import DenseSegmentError, dense_segment, dense_segment_prepare
from knowledge.retrieval.entries import RouterConfig
from knowledge.retrieval.index import EntriesDigest, RouterIndex, entries_digest
from knowledge.retrieval import segments
from knowledge.retrieval.segments import (
    SegmentError,
    segment_exists,
    segment_load,
    segment_lock,
    segment_path,
    segments_collect,
)
from knowledge.retrieval.segment_build import segment_build

logger = logging.getLogger(__name__)


def index_dir() -> Path | None:
    value = getattr(settings, "KNOWLEDGE_INDEX_DIR", None)
    return Path(value) if value else None


def catalog_config(catalog, config: RouterConfig) -> RouterConfig:
    """``config`` with what curators keep catalog-wide: synonym sets, out-of-scope questions."""
    config = _with_synonyms(config, getattr(catalog, "synonyms", ()))
    questions = getattr(catalog, "out_of_scope", ())
    return replace(config, out_of_scope=questions) if questions else config


def _with_synonyms(config: RouterConfig, synonyms) -> RouterConfig:
    return replace(config, synonyms=synonyms) if synonyms else config


def catalog_dense(catalog, entries=None, live=None, base: DenseIndex | None = None) -> DenseIndex | None:
    """The stored entry vectors, and example-question vectors, for the dense signal, aligned with
    ``entries`` (the catalog's by default); dead slots of a delta (``live`` False) get none. None without
    any vector, or with the model off.

    With ``base`` (the dense index of a delta's base), the base's matrix and example rows are kept and
    only the slots whose vector or example rows differ are overlaid (``DenseIndex.overlay_over``).
    Otherwise they are the shared mapped file of these vectors (``dense_segment``) when an index
    directory is set, else built in memory. Either way the catalog then keeps views into the index's
    rows as its vectors and example rows (``Catalog.hold_vectors``): one copy per process, or none
    beyond the shared pages.
    """
    vectors = getattr(catalog, "vectors", None)
    if not vectors or not retrieval_embeddings.available():
        return None
    entries = catalog.entries if entries is None else entries
    ids = [e.package_id for e in entries]
    examples = getattr(catalog, "example_vectors", None) or {}
    if base is not None and live is not None:
        dense = base.overlay_over(vectors, ids, live, examples)
    else:
        dense = _dense_build(catalog, ids, vectors, live, examples)
    if hasattr(catalog, "hold_vectors"):
        overlaid = set(dense.overlay_slots.tolist())
        rows = dense.base_rows()
        asked = dense.example_rows()
        catalog.hold_vectors(
            {pid: rows[i] for i, pid in enumerate(ids[: len(rows)]) if dense.present[i] and i not in overlaid},
            {ids[i]: view for i, view in asked.items()},
        )
    return dense


def _dense_build(catalog, ids: list[str], vectors, live, examples) -> DenseIndex:
    directory = index_dir()
    if directory is not None and live is None:
        try:
            return dense_segment(
                directory,
                ids,
                vectors,
                model_id=retrieval_embeddings.MODEL_ID,
                dim=retrieval_embeddings.DIM,
                keep=int(getattr(settings, "KNOWLEDGE_INDEX_KEEP", 2)),
                examples=examples,
            )
        except (OSError, DenseSegmentError) as exc:  # as for the BM25 segment: this process keeps its own copy
            logger.warning("router_vectors_unavailable version=%s error=%s", catalog.version, type(exc).__name__)
            metrics.SHARED_UNAVAILABLE.labels(part="vectors").inc()
    dense = DenseIndex.from_rows(
        [
            np.frombuffer(vectors[pid], dtype="<f4") if pid in vectors and (live is None or live[i]) else None
            for i, pid in enumerate(ids)
        ]
    )
    if examples:
        dense.attach_examples(
            {
                i: examples[pid]
                for i, pid in enumerate(ids)
                if pid in examples and dense.present[i] and (live is None or live[i])
            }
        )
    return dense


def segment_key(digest: str, fingerprint: str) -> str:
    """The segment's directory name: content, settings, and the on-disk format, so that during a
    rolling deploy the old and the new code each map their own segment instead of each finding the
    other's unreadable and rebuilding it in turn."""
    return f"{digest}-{fingerprint}-f{segments.FORMAT}"


def shared_index_build(
    catalog, config: RouterConfig, fingerprint: str, *, force: bool = False, dense=None
) -> RouterIndex:
    """The catalog's index, over its shared segment when an index directory is set.

    ``dense(catalog)`` gives the entry vectors of the dense signal (stored per revision, not in the
    segment: they are small and already computed)."""
    started = time.perf_counter()
    index, how = _shared_index_build(catalog, catalog_config(catalog, config), fingerprint, force=force)
    if dense is not None:
        index.attach_dense(dense(catalog))
        if index.dense is not None and index.config.out_of_scope:
            # Embedded here, in the build (a rebuild runs beside the serving index), not by a route.
            index.dense.questions_matrix(index.config.out_of_scope)
    _ready(how, started)
    return index


def _ready(how: str, started: float) -> None:
    metrics.INDEX_READY.labels(how=how).inc()
    metrics.INDEX_READY_SECONDS.labels(how=how).observe(time.perf_counter() - started)


def _shared_index_build(catalog, config: RouterConfig, fingerprint: str, *, force: bool) -> tuple[RouterIndex, str]:
    """The index and how it was made ready (``knowledge.metrics``: mapped, written or memory)."""
    directory = index_dir()
    if directory is None:
        return _memory_index(catalog, config), metrics.HOW_MEMORY
    try:
        return _segment_index_build(catalog, config, fingerprint, directory, force=force)
    except (OSError, SegmentError) as exc:
        # The shared directory is an optimisation: a full disk, a read-only var/ or a segment that
        # cannot be written or read back must not take routing down. This process builds in memory.
        logger.warning("router_segment_unavailable version=%s error=%s", catalog.version, type(exc).__name__)
        metrics.SHARED_UNAVAILABLE.labels(part="segment").inc()
        return _memory_index(catalog, config), metrics.HOW_MEMORY


def _memory_index(catalog, config: RouterConfig) -> RouterIndex:
    return RouterIndex(catalog.entries, config=config, version=catalog.version, content_digest=catalog.content_digest)


def _segment_index_build(catalog, config: RouterConfig, fingerprint: str, directory: Path, *, force: bool):
    digest = catalog.content_digest
    key = catalog_segment_key(digest, config, fingerprint)
    if not force:
        index = _open(catalog, config, directory, key, digest)
        if index is not None:
            return index, metrics.HOW_MAPPED
    with segment_lock(directory, key):  # another process building this key: wait, then map its files
        if not force:
            index = _open(catalog, config, directory, key, digest)
            if index is not None:
                return index, metrics.HOW_MAPPED
        started = time.perf_counter()
        if segment_exists(directory, key):
            # Forced, or present but unreadable (an older format, a truncated file): written anew.
            shutil.rmtree(segment_path(directory, key), ignore_errors=True)
        # Written from the entries batch by batch, with no index in memory (docs/retrieval.md, "Build at
        # 100k, part 4"); then mapped like any other process's.
        segment_build(
            directory,
            key,
            catalog.entries,
            config,
            info={"catalog_version": catalog.version, "entries": len(catalog.entries)},
        )
        bm25, tables = segment_load(directory, key)
        index = RouterIndex(
            catalog.entries,
            config=config,
            version=catalog.version,
            bm25=bm25,
            content_digest=digest,
            tables=tables,
        )
        removed = segments_collect(directory, keep=int(getattr(settings, "KNOWLEDGE_INDEX_KEEP", 2)), protect=(key,))
        logger.info(
            "router_segment_written version=%s entries=%d ms=%.1f collected=%d",
            catalog.version,
            len(index),
            (time.perf_counter() - started) * 1000,
            len(removed),
        )
        return index, metrics.HOW_WRITTEN


def catalog_segment_key(digest: str, config: RouterConfig, fingerprint: str) -> str:
    """The segment key of a catalog's content under ``config`` (its synonyms applied, see ``catalog_config``)."""
    # Curated synonyms live in the catalog, not in settings: they belong in the key too.
    if config.synonyms:
        fingerprint = f"{fingerprint}s{hashlib.sha1(repr(config.synonyms).encode()).hexdigest()[:8]}"
    return segment_key(digest, fingerprint)


def _open(catalog, config, directory: Path, key: str, digest: str) -> RouterIndex | None:
    if not segment_exists(directory, key):
        return None
    try:
        bm25, tables = segment_load(directory, key)
        return RouterIndex(
            catalog.entries,
            config=config,
            version=catalog.version,
            bm25=bm25,
            content_digest=digest,
            tables=tables,
        )
    except (SegmentError, ValueError):
        logger.warning("router_segment_unreadable key=%s", key)
        return None


def delta_index(current: RouterIndex, catalog, config: RouterConfig) -> RouterIndex | None:
    """``current``'s base plus a delta for ``catalog``; None when a full build is due."""
    limit = int(getattr(settings, "KNOWLEDGE_INDEX_DELTA_MAX", 256))
    if limit <= 0:
        return None
    base = current.delta_base or current
    if catalog_config(catalog, config) != base.config:
        return None  # settings or curated synonyms changed: everything is scored differently
    started = time.perf_counter()
    index = index_with_edits(current, catalog.entries, version=catalog.version, max_changes=limit)
    if index is not None:
        if current.dense is not None or getattr(catalog, "vectors", None):
            # Over the base's matrix (shared, or this process's): the edit's vectors are overlaid.
            base_dense = base.dense if base.dense is not None and len(base.dense) == len(base.entries) else None
            index.attach_dense(catalog_dense(catalog, index.entries, index.bm25.live, base=base_dense))
        logger.info(
            "router_delta_applied version=%s changed=%d live=%d ms=%.1f",
            catalog.version,
            index.bm25.changed_count,
            len(index),
            index.build_ms,
        )
        _ready(metrics.HOW_DELTA, started)
    return index


# Set while a router_index_build is queued and not yet started: a burst of edits queues one task.
BUILD_PENDING_KEY = "knowledge:router_index_build:pending"
# How long a queued task keeps others from being queued (a lost one: the processes compact after their wait).
BUILD_PENDING_SECONDS = 600
# How often a process waiting for the worker's segment looks for it.
SEGMENT_POLL_SECONDS = 0.25


def compact_wait() -> float:
    """Seconds a process serving an edit through a delta waits for the worker's segment before compacting
    itself (``KNOWLEDGE_INDEX_COMPACT_WAIT``); 0 without a shared index directory."""
    if index_dir() is None:
        return 0.0
    return max(0.0, float(getattr(settings, "KNOWLEDGE_INDEX_COMPACT_WAIT", 0) or 0))


def router_index_build_soon() -> bool:
    """Queue ``knowledge.router_index_build`` for a committed catalog change; True when queued.

    Not with eager tasks (the build would run inside the request that made the change) nor with
    ``compact_wait()`` at 0; and not while one is queued and has not started (it will read this change
    too; the task clears the mark when it starts, so a change made while it runs queues the next one).
    A broker or cache that cannot be reached queues nothing: the processes compact after their wait."""
    from django.core.cache import cache

    from knowledge.tasks import router_index_build

    if compact_wait() <= 0 or router_index_build.app.conf.task_always_eager:
        return False
    try:
        if not cache.add(BUILD_PENDING_KEY, 1, timeout=BUILD_PENDING_SECONDS):
            metrics.INDEX_BUILD_QUEUE.labels(outcome=metrics.BUILD_ALREADY_QUEUED).inc()
            return False
        try:
            router_index_build.delay()
        except Exception:
            cache.delete(BUILD_PENDING_KEY)
            raise
    except Exception as exc:  # a boundary: the edit is committed; the processes compact themselves
        logger.warning("router_index_build_not_queued error=%s", type(exc).__name__)
        metrics.INDEX_BUILD_QUEUE.labels(outcome=metrics.BUILD_NOT_QUEUED).inc()
        return False
    metrics.INDEX_BUILD_QUEUE.labels(outcome=metrics.BUILD_QUEUED).inc()
    return True


def router_index_build_started() -> None:
    """The task has started: the next change queues another (it may not be in what this one reads)."""
    from django.core.cache import cache

    try:
        cache.delete(BUILD_PENDING_KEY)
    except Exception as exc:  # the mark expires by itself
        logger.warning("router_index_build_mark_kept error=%s", type(exc).__name__)


def segment_wait(catalog, config: RouterConfig, fingerprint: str, *, timeout: float, wanted) -> bool:
    """Wait up to ``timeout`` seconds for another process (the Celery task) to publish ``catalog``'s
    segment; True once it exists. Stops early, False, when ``wanted()`` turns false (a newer change)."""
    directory = index_dir()
    if directory is None or timeout <= 0:
        return False
    key = catalog_segment_key(catalog.content_digest, catalog_config(catalog, config), fingerprint)
    deadline = time.monotonic() + timeout
    while not segment_exists(directory, key):
        left = deadline - time.monotonic()
        if left <= 0 or not wanted():
            return False
        time.sleep(min(SEGMENT_POLL_SECONDS, left))
    return True


class CatalogChanged(Exception):
    """The catalog changed while its segment was being written from the database."""


def router_index_prepare() -> dict:
    """Write the active catalog's shared segment, and its entry vectors' file, unless they exist (Celery
    task, deploy step); idempotent.

    The entries are streamed from the database, never held: read once for the digest that names the
    segment, once more to write it (``segment_build``), so this process's peak is the builder's own
    (docs/retrieval.md, "Build at 100k, part 4"). A change committed between the two reads is caught
    (the second read's digest differs): nothing is published, the status says ``changed``, and the
    processes build the new catalog's segment as they would without this task.

    The vectors (``vectors`` in the result: ``built``, ``exists``, ``none`` without any stored vector,
    ``disabled`` with the model off, ``unavailable`` when their directory cannot be used; absent when
    the status is ``changed`` or ``unavailable``) are streamed from the database into their file as well
    (``dense_segment_prepare``), named as the processes name them, so no process writes them either.
    """
    from knowledge.catalog import catalog_entries_stream, catalog_synonyms
    from knowledge.routing_service import _config_fingerprint, router_config
    from knowledge.selectors import catalog_version_get

    directory = index_dir()
    version = catalog_version_get()
    if directory is None:
        return {"status": "disabled", "version": version}
    config = router_config()
    fingerprint = _config_fingerprint(config)
    config = _with_synonyms(config, catalog_synonyms())
    package_ids: list[str] = []  # the catalog's order, for the vectors' file

    def noting_ids():
        for entry in catalog_entries_stream():
            package_ids.append(entry.package_id)
            yield entry

    digest = entries_digest(noting_ids())
    key = catalog_segment_key(digest, config, fingerprint)
    try:
        if segment_exists(directory, key):
            result = {"status": "exists", "version": version, "key": key}
        else:
            result = _segment_prepare(directory, key, digest, config, version, catalog_entries_stream)
            if result["status"] == "changed":
                return result
    except OSError as exc:  # an unusable index directory: the processes build in memory, as they would
        logger.warning("router_segment_unavailable version=%s error=%s", version, type(exc).__name__)
        return {"status": "unavailable", "version": version}
    try:
        result["vectors"] = _vectors_prepare(directory, package_ids, version)
    except OSError as exc:  # as for the segment: each process then keeps its own matrix
        logger.warning("router_vectors_unavailable version=%s error=%s", version, type(exc).__name__)
        result["vectors"] = "unavailable"
    return result


def _segment_prepare(directory: Path, key: str, digest: str, config: RouterConfig, version, stream) -> dict:
    with segment_lock(directory, key):
        if segment_exists(directory, key):
            return {"status": "exists", "version": version, "key": key}
        started = time.perf_counter()
        read = EntriesDigest()

        def unchanged() -> None:
            if read.hexdigest() != digest:
                raise CatalogChanged

        try:
            segment_build(
                directory,
                key,
                read.passing(stream()),
                config,
                info={"catalog_version": version},
                before_publish=unchanged,
            )
        except CatalogChanged:
            logger.info("router_segment_catalog_changed version=%s", version)
            return {"status": "changed", "version": version}
        removed = segments_collect(directory, keep=int(getattr(settings, "KNOWLEDGE_INDEX_KEEP", 2)), protect=(key,))
    logger.info(
        "router_segment_prepared version=%s ms=%.1f collected=%d",
        version,
        (time.perf_counter() - started) * 1000,
        len(removed),
    )
    return {"status": "built", "version": version, "key": key}


def _vectors_prepare(directory: Path, package_ids: list[str], version) -> str:
    """The catalog's entry vectors into their shared file (``router_index_prepare``); returns the status."""
    from knowledge.embeddings import catalog_vector_rows

    if not retrieval_embeddings.enabled():
        return "disabled"
    started = time.perf_counter()
    key, written, count = dense_segment_prepare(
        directory,
        package_ids,
        catalog_vector_rows(),
        model_id=retrieval_embeddings.MODEL_ID,
        dim=retrieval_embeddings.DIM,
        keep=int(getattr(settings, "KNOWLEDGE_INDEX_KEEP", 2)),
    )
    if key is None:
        return "none"
    logger.info(
        "router_vectors_prepared version=%s rows=%d vectors=%d written=%s ms=%.1f",
        version,
        len(package_ids),
        count,
        written,
        (time.perf_counter() - started) * 1000,
    )
    return "built" if written else "exists"
