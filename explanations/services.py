"""Writes of the explanations app: accept a result, run its explanation, sweep.

The explanation step (`explanation_run`) is idempotent on the Explanation's
uuid5 id: once an outcome is recorded, running it again calls no model. The
model call runs outside any transaction; the write locks the result row and
re-checks it, so a redelivered message racing the first one writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from explanations.entities import result_meaning
from explanations.exceptions import ExplanationNotRetriableError, InvalidResultError, ResultConflictError
from explanations.llm_client import ProviderUnavailable, model_name, narrate
from explanations.metrics import EXPLANATION_DURATION, EXPLANATIONS
from explanations.models import Explanation, ExplanationOutcome, Result
from explanations.numbers import CitedNumber, check_narrative
from explanations.prompts import UNIT_KINDS, ResultFacts, build_prompt, citable_numbers

logger = logging.getLogger(__name__)
Status = Result.ExplanationStatus
Outcome = ExplanationOutcome

# Publishing to a dead broker must fail fast: the result is already saved
# and the sweep will enqueue it later.
ENQUEUE_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


# --- accepting results -------------------------------------------------------------


def _canonical(value):
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def _payload_hash(fields: dict) -> str:
    return hashlib.sha256(json.dumps(_canonical(fields), sort_keys=True).encode()).hexdigest()


def _validate_facts(fields: dict) -> None:
    errors = {}
    units = fields.get("units") or {}
    bad_units = sorted(k for k, v in units.items() if v not in UNIT_KINDS)
    if bad_units:
        errors["units"] = f"Unknown unit for {', '.join(bad_units)}; use one of {', '.join(UNIT_KINDS)}."
    for item in fields.get("rule_numbers") or []:
        if isinstance(item, dict) and item.get("kind", "number") not in UNIT_KINDS:
            errors["rule_numbers"] = f"Unknown kind {item.get('kind')!r}; use one of {', '.join(UNIT_KINDS)}."
    if errors:
        raise InvalidResultError("The result is not valid: " + "; ".join(errors.values()), details=errors)


def result_create(*, acting_user, tenant, result_id: str, **fields) -> tuple[Result, bool]:
    """Store a result and enqueue its explanation on commit.

    Sending the same result again returns the stored one (created=False);
    sending different facts under the same result_id is a conflict."""
    _validate_facts(fields)
    fields = {k: _canonical(v) if k in ("totals", "breakdowns", "rule_numbers") else v for k, v in fields.items()}
    # Results sent before counts, labels and rounding existed keep their hash (and their idempotency).
    for name, empty in (("counts", {}), ("labels", {}), ("rounding", "exact")):
        if name in fields and fields[name] == empty:
            fields.pop(name)
    payload_hash = _payload_hash({"result_id": result_id, **fields})
    existing = Result.objects.filter(tenant=tenant, result_id=result_id).first()
    if existing is not None:
        return _same_or_conflict(existing, payload_hash), False
    result = Result(tenant=tenant, result_id=result_id, created_by=acting_user, payload_hash=payload_hash, **fields)
    result.full_clean()
    try:
        with transaction.atomic():
            result.save()
            transaction.on_commit(lambda: result_enqueue_explanation(result_pk=result.pk))
    except IntegrityError:
        # A concurrent request stored the same result_id first.
        existing = Result.objects.get(tenant=tenant, result_id=result_id)
        return _same_or_conflict(existing, payload_hash), False
    logger.info("result.created result_pk=%s tenant=%s", result.pk, tenant.pk)
    return result, True


def _same_or_conflict(existing: Result, payload_hash: str) -> Result:
    if existing.payload_hash != payload_hash:
        raise ResultConflictError(details={"result_id": existing.result_id})
    return existing


def result_enqueue_explanation(*, result_pk: int) -> bool:
    """Publish the explanation task. False (result stays pending) if the broker is down."""
    from explanations.tasks import explain_result

    try:
        explain_result.apply_async(args=[result_pk], retry=True, retry_policy=ENQUEUE_RETRY_POLICY)
    except Exception as exc:  # boundary: any broker failure leaves the result pending
        logger.warning("explanation.enqueue_failed result_pk=%s error=%s", result_pk, type(exc).__name__)
        return False
    now = timezone.now()
    Result.objects.filter(pk=result_pk).exclude(explanation_status=Status.DONE).update(
        explanation_status=Status.QUEUED, enqueued_at=now, updated_at=now
    )
    return True


def results_sweep_pending(
    *,
    pending_grace: timedelta = timedelta(seconds=60),
    queued_stale_after: timedelta = timedelta(minutes=30),
    limit: int = 500,
) -> int:
    """Re-enqueue results the broker never got (pending past a grace period,
    which covers the on-commit enqueue still in flight) and results queued
    long ago with no outcome (a lost message). Safe to run any time: the
    task is idempotent. Returns how many were enqueued."""
    now = timezone.now()
    due = (
        Result.objects.filter(
            Q(explanation_status=Status.PENDING, updated_at__lte=now - pending_grace)
            | Q(explanation_status=Status.QUEUED, enqueued_at__lte=now - queued_stale_after)
        )
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    enqueued = 0
    for pk in list(due):
        if not result_enqueue_explanation(result_pk=pk):
            break  # broker still down: the next sweep tries again
        enqueued += 1
    logger.info("explanation.sweep enqueued=%d", enqueued)
    return enqueued


def result_explanation_retry(*, acting_user, result: Result) -> Result:
    """Explain again a result whose provider was unavailable (the only outcome
    with no Explanation row, so the idempotency guard lets it through)."""
    with transaction.atomic():
        locked = Result.objects.select_for_update().get(pk=result.pk)
        if locked.explanation_outcome != Outcome.PROVIDER_UNAVAILABLE:
            raise ExplanationNotRetriableError(details={"result_id": locked.result_id})
        locked.explanation_status = Status.PENDING
        locked.explanation_outcome = ""
        locked.explained_at = None
        locked.save(update_fields=["explanation_status", "explanation_outcome", "explained_at", "updated_at"])
        transaction.on_commit(lambda: result_enqueue_explanation(result_pk=locked.pk))
    logger.info("explanation.retry_requested result_pk=%s user=%s", locked.pk, getattr(acting_user, "pk", None))
    return locked


# --- the explanation step ----------------------------------------------------------------


@dataclass(frozen=True)
class ExplanationRun:
    outcome: str
    explanation_id: uuid.UUID | None
    model_called: bool


def _numbers_json(numbers: tuple[CitedNumber, ...]) -> list[dict]:
    return [
        {"text": n.text, "value": str(n.value), "kind": n.kind, "start": n.start, "end": n.end}
        | ({"reason": n.reason} if n.reason else {})
        for n in numbers
    ]


def explanation_run(*, result_pk: int, task_id: str = "") -> ExplanationRun | None:
    result = Result.objects.select_related("tenant").filter(pk=result_pk).first()
    if result is None:  # deleted after it was enqueued: nothing to explain
        logger.info("explanation.skip result_pk=%s task_id=%s reason=result_missing", result_pk, task_id)
        return None
    explanation_id = result.explanation_id
    if result.explanation_status == Status.DONE:
        logger.info(
            "explanation.skip result_id=%s task_id=%s outcome=%s reason=already_done",
            result.result_id,
            task_id,
            result.explanation_outcome,
        )
        has_row = Explanation.objects.filter(pk=explanation_id).exists()
        return ExplanationRun(result.explanation_outcome, explanation_id if has_row else None, model_called=False)

    facts = ResultFacts.from_result(result)
    citable = citable_numbers(facts)
    prompt = build_prompt(facts, citable)
    logger.info("explanation.start result_id=%s task_id=%s", result.result_id, task_id)
    started = time.monotonic()
    try:
        response, failure = None, ""
        try:
            response = narrate(prompt, timeout=settings.EXPLANATION_LLM_TIMEOUT)
        except ProviderUnavailable as exc:
            failure = exc.reason
        except SoftTimeLimitExceeded:
            failure = "soft_time_limit"
        duration_ms = int((time.monotonic() - started) * 1000)
        check = None
        if response is None:
            outcome = Outcome.PROVIDER_UNAVAILABLE
        elif not response.strip():
            outcome = Outcome.NO_RESPONSE
        else:
            check = check_narrative(response.strip(), citable, rounding=facts.rounding, meaning=result_meaning(facts))
            outcome = Outcome.VERIFIED if check.passed else Outcome.REJECTED
        stored, created = _record_outcome(
            result_pk=result.pk,
            payload_hash=result.payload_hash,
            explanation_id=explanation_id,
            outcome=outcome,
            prompt=prompt,
            response=response,
            check=check,
            duration_ms=duration_ms,
            task_id=task_id,
        )
    except BaseException as exc:
        EXPLANATIONS.labels(outcome="error").inc()
        logger.warning(
            "explanation.error result_id=%s task_id=%s error=%s", result.result_id, task_id, type(exc).__name__
        )
        raise
    finally:
        EXPLANATION_DURATION.observe(time.monotonic() - started)
    if created:
        EXPLANATIONS.labels(outcome=outcome).inc()
    logger.info(
        "explanation.finish result_id=%s task_id=%s outcome=%s duration_ms=%d cited=%d unmatched=%d%s%s",
        result.result_id,
        task_id,
        stored,
        duration_ms,
        len(check.cited) if check else 0,
        len(check.unmatched) if check else 0,
        f" provider_error={failure}" if failure else "",
        "" if created else " duplicate=true",
    )
    has_row = stored != Outcome.PROVIDER_UNAVAILABLE
    return ExplanationRun(stored, explanation_id if has_row else None, model_called=True)


def _record_outcome(
    *, result_pk, payload_hash, explanation_id, outcome, prompt, response, check, duration_ms, task_id
) -> tuple[str, bool]:
    """Write the outcome once. Returns (stored outcome, whether this call wrote it)."""
    with transaction.atomic():
        locked = Result.objects.select_for_update().get(pk=result_pk)
        if locked.explanation_status == Status.DONE:
            return locked.explanation_outcome, False  # a concurrent delivery won
        if locked.payload_hash != payload_hash:
            # Results are immutable; if that ever changes, never store a
            # narrative checked against other facts.
            raise InvalidResultError("The result changed while it was being explained.")
        if outcome != Outcome.PROVIDER_UNAVAILABLE:
            explanation = Explanation(
                id=explanation_id,
                tenant_id=locked.tenant_id,
                result=locked,
                prompt=prompt,
                response=response or "",
                narrative=(response or "").strip(),
                verified=outcome == Outcome.VERIFIED,
                outcome=outcome,
                cited_numbers=_numbers_json(check.cited) if check else [],
                unmatched_numbers=_numbers_json(check.unmatched) if check else [],
                rounding=check.rounding if check else "",
                model=model_name(),
                duration_ms=duration_ms,
                task_id=task_id or "",
            )
            explanation.full_clean(validate_unique=False)
            explanation.save(force_insert=True)
        locked.explanation_status = Status.DONE
        locked.explanation_outcome = outcome
        locked.explained_at = timezone.now()
        locked.save(update_fields=["explanation_status", "explanation_outcome", "explained_at", "updated_at"])
    return outcome, True
