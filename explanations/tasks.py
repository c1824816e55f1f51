"""Celery tasks of the explanations app: thin, ids in, one service call.

`explain_result` is acks_late with reject_on_worker_lost: a worker that dies
mid-task leaves the message to be delivered again, and the service's uuid5
guard makes the second delivery either finish the work or do nothing.
Only infrastructure errors (the database) are retried, with backoff;
provider errors never reach here: the service records them as an outcome.
"""

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from explanations.services import explanation_run, results_sweep_pending

# One model call is at most (1 + LLM_MAX_RETRIES) attempts of
# EXPLANATION_LLM_TIMEOUT seconds; leave room to write the outcome.
_CALL_BUDGET = (1 + settings.LLM_MAX_RETRIES) * settings.EXPLANATION_LLM_TIMEOUT


@shared_task(
    name="explanations.explain_result",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=8,
    soft_time_limit=_CALL_BUDGET + 20,
    time_limit=_CALL_BUDGET + 40,
)
def explain_result(self, result_pk: int) -> dict | None:
    run = explanation_run(result_pk=result_pk, task_id=self.request.id or "")
    if run is None:
        return None
    return {
        "outcome": run.outcome,
        "explanation_id": str(run.explanation_id) if run.explanation_id else None,
        "model_called": run.model_called,
    }


@shared_task(name="explanations.sweep_pending", acks_late=True)
def sweep_pending_explanations() -> int:
    return results_sweep_pending()
