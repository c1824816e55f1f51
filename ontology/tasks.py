"""Celery tasks of the ontology app: thin, one service call."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from ontology.services.summary_tree import summary_tree_build


@shared_task(
    name="ontology.summary_tree_build",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    max_retries=5,
    soft_time_limit=600,
    time_limit=660,
)
def summary_tree_build_task(force: bool = False) -> int | None:
    """Idempotent: a tree already built from the same indexed chunks is kept."""
    tree = summary_tree_build(force=force)
    return tree.version if tree is not None else None
