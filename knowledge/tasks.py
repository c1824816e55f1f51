"""Celery tasks of the knowledge app: thin, ids in, one service call."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from knowledge.embeddings import embedding_sweep, revision_embedding_compute
from knowledge.index_store import router_index_build_started, router_index_prepare
from knowledge.search_terms import search_terms_propose

# Every knowledge task: acknowledged after it ran (a lost worker's task runs again: each is
# idempotent), retried with backoff while the database is unreachable.
_DB_TASK = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "max_retries": 5,
}


@shared_task(name="knowledge.suggest_search_terms", **_DB_TASK)
def suggest_search_terms(revision_pk: int) -> dict | None:
    record = search_terms_propose(revision_pk=revision_pk)
    return None if record is None else {"status": record.status}


@shared_task(name="knowledge.propose_out_of_scope", **_DB_TASK)
def propose_out_of_scope(request_key: str) -> dict | None:
    """The model's out-of-scope questions for the catalog, saved as an inactive set (idempotent per key)."""
    from knowledge.out_of_scope import out_of_scope_propose

    proposed = out_of_scope_propose(request_key=request_key)
    return None if proposed is None else {"set": proposed.pk, "questions": len(proposed.questions)}


@shared_task(name="knowledge.embed_revision", **_DB_TASK)
def embed_revision(revision_pk: int) -> bool:
    """The revision's passage vector for the router's dense signal (idempotent)."""
    return revision_embedding_compute(revision_pk=revision_pk)


@shared_task(name="knowledge.embedding_sweep", **_DB_TASK)
def embedding_sweep_run() -> dict:
    """Vectors for current revisions that lack one of the router's model (Celery beat; idempotent)."""
    return embedding_sweep()


@shared_task(name="knowledge.router_index_build", **_DB_TASK)
def router_index_build() -> dict:
    """Write the active catalog's shared router segment and entry vectors' file (if missing), so web processes map them
    instead of writing them. Queued on each committed catalog change (``index_store.router_index_build_soon``)."""
    router_index_build_started()
    return router_index_prepare()
