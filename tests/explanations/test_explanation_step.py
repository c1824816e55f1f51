"""The explanation step end to end in one process: POST a result, the task
runs (eagerly), the LLM is a scripted server on a real local socket.

The seed's acceptance list (T-317), adapted: verified, rejected, provider
down, re-run without a model call, no PII in the stored prompt.
"""

import socket
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.urls import reverse

from explanations import services
from explanations.models import Explanation, ExplanationOutcome, Result, explanation_id_for
from explanations.tasks import explain_result

from .conftest import PII_VALUES, REJECTED_NARRATIVE, VERIFIED_NARRATIVE

pytestmark = pytest.mark.django_db(transaction=False)

RESULTS_URL = "/api/v1/results"


def explanation_url(result_id):
    return f"/api/v1/results/{result_id}/explanation"


def post_result(api_client, payload, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(RESULTS_URL, payload, format="json")
    return response


def test_narrative_citing_amount_percent_store_and_period_is_verified(
    api_client, llm, payroll_payload, tenant, django_capture_on_commit_callbacks
):
    llm.reply(VERIFIED_NARRATIVE)
    response = post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert response.status_code == 201, response.json()

    body = api_client.get(explanation_url("sim-2026-03-0001")).json()
    assert body["status"] == "done"
    assert body["outcome"] == "verified"
    assert body["verified"] is True
    assert body["narrative"] == VERIFIED_NARRATIVE

    explanation = Explanation.objects.get()
    assert explanation.id == explanation_id_for(tenant_id=tenant.pk, result_id="sim-2026-03-0001")
    assert str(explanation.id) == body["explanation_id"]
    assert explanation.verified and explanation.outcome == ExplanationOutcome.VERIFIED
    assert explanation.unmatched_numbers == []
    assert [n["text"] for n in explanation.cited_numbers] == [
        "março",
        "2026",
        "R$ 1.234.567,89",
        "2,45%",
        "0423",
        "R$ 18.000,00",
    ]
    assert explanation.model == "scripted-model"
    # One call, temperature 0, the stored prompt is what was sent.
    assert len(llm.requests) == 1
    sent = llm.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.body["temperature"] == 0
    assert sent.user_text == explanation.prompt
    assert explanation.response == VERIFIED_NARRATIVE


def test_narrative_citing_a_computed_share_is_rejected_and_kept_for_auditors(
    api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    llm.reply(REJECTED_NARRATIVE)
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)

    body = api_client.get(explanation_url("sim-2026-03-0001")).json()
    assert body["outcome"] == "rejected"
    assert body["verified"] is False
    assert body["narrative"] is None  # never shown to end users

    explanation = Explanation.objects.get()
    assert explanation.verified is False
    assert explanation.narrative == REJECTED_NARRATIVE
    assert [n["text"] for n in explanation.unmatched_numbers] == ["60,88%"]
    unmatched = explanation.unmatched_numbers[0]
    assert explanation.narrative[unmatched["start"] : unmatched["end"]] == "60,88%"


@pytest.mark.parametrize(
    "script",
    [
        # LLM_MAX_RETRIES=1: transient failures are tried twice, a 401 once.
        pytest.param(lambda s: s.status(500).status(500), id="http-500"),
        pytest.param(lambda s: s.status(401), id="http-401"),
        pytest.param(lambda s: s.delay(3, VERIFIED_NARRATIVE).delay(3, VERIFIED_NARRATIVE), id="timeout"),
        pytest.param(lambda s: s.malformed().malformed(), id="malformed-body"),
    ],
)
def test_provider_failure_is_provider_unavailable_with_no_narrative_row(
    api_client, llm, settings, payroll_payload, script, django_capture_on_commit_callbacks
):
    settings.EXPLANATION_LLM_TIMEOUT = 0.3
    script(llm)
    response = post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert response.status_code == 201  # the pipeline goes on

    body = api_client.get(explanation_url("sim-2026-03-0001")).json()
    assert (body["status"], body["outcome"], body["narrative"], body["explanation_id"]) == (
        "done",
        "provider_unavailable",
        None,
        None,
    )
    assert not Explanation.objects.exists()


def test_one_call_uses_the_models_max_retries_on_server_errors(
    api_client, llm, payroll_payload, settings, django_capture_on_commit_callbacks
):
    settings.LLM_MAX_RETRIES = 1
    llm.status(503).reply(VERIFIED_NARRATIVE)
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert len(llm.requests) == 2
    assert Result.objects.get().explanation_outcome == "verified"


def test_provider_down_connection_refused(api_client, settings, payroll_payload, django_capture_on_commit_callbacks):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = f"http://127.0.0.1:{port}/v1"
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert Result.objects.get().explanation_outcome == "provider_unavailable"
    assert not Explanation.objects.exists()


def test_empty_reply_is_no_response(api_client, llm, payroll_payload, django_capture_on_commit_callbacks):
    llm.reply("")
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    body = api_client.get(explanation_url("sim-2026-03-0001")).json()
    assert (body["outcome"], body["verified"], body["narrative"]) == ("no_response", False, None)
    explanation = Explanation.objects.get()
    assert (explanation.outcome, explanation.verified, explanation.narrative) == ("no_response", False, "")


def test_rerun_after_the_write_returns_the_same_explanation_without_calling_the_model(
    api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    llm.reply(VERIFIED_NARRATIVE)
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    result = Result.objects.get()
    first = Explanation.objects.get()
    assert len(llm.requests) == 1

    again = explain_result.apply(args=[result.pk]).get()
    assert again == {"outcome": "verified", "explanation_id": str(first.id), "model_called": False}
    assert len(llm.requests) == 1
    assert Explanation.objects.count() == 1


def test_redelivery_after_a_crash_between_call_and_write_writes_once(llm, tenant):
    """A worker that dies after the model call but before the write leaves no
    row: the redelivered message calls the model again and writes once; any
    later delivery is a no-op."""
    llm.reply("Custo de R$ 10,00.").reply("Custo de R$ 10,00.")
    result = Result.objects.create(
        tenant=tenant, result_id="r-crash", verdict="ok", totals={"custo": "10"}, payload_hash="x"
    )
    with mock.patch.object(services, "_record_outcome", side_effect=SystemExit("worker killed")):
        with pytest.raises(SystemExit):
            services.explanation_run(result_pk=result.pk, task_id="delivery-1")
    assert not Explanation.objects.exists()
    result.refresh_from_db()
    assert result.explanation_status == Result.ExplanationStatus.PENDING

    run = services.explanation_run(result_pk=result.pk, task_id="delivery-2")
    assert run.model_called and run.outcome == "verified"
    again = services.explanation_run(result_pk=result.pk, task_id="delivery-3")
    assert not again.model_called and again.explanation_id == run.explanation_id
    assert len(llm.requests) == 2
    assert Explanation.objects.get().task_id == "delivery-2"


def test_a_concurrent_delivery_that_loses_the_race_writes_nothing(llm, tenant):
    llm.reply("Custo de R$ 10,00.")
    result = Result.objects.create(
        tenant=tenant, result_id="r-race", verdict="ok", totals={"custo": "10"}, payload_hash="x"
    )
    # Another delivery recorded the outcome while this one was waiting on the model.
    original = services.narrate

    def narrate_while_other_delivery_writes(prompt, *, timeout):
        reply = original(prompt, timeout=timeout)
        services._record_outcome(
            result_pk=result.pk,
            payload_hash="x",
            explanation_id=result.explanation_id,
            outcome="no_response",
            prompt=prompt,
            response="",
            check=None,
            duration_ms=1,
            task_id="other",
        )
        return reply

    with mock.patch.object(services, "narrate", side_effect=narrate_while_other_delivery_writes):
        run = services.explanation_run(result_pk=result.pk, task_id="late")
    assert run.outcome == "no_response"
    assert Explanation.objects.get().task_id == "other"


def test_stored_prompt_has_no_pii_values(api_client, llm, payroll_payload, django_capture_on_commit_callbacks):
    llm.reply(VERIFIED_NARRATIVE)
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    prompt = Explanation.objects.get().prompt
    assert "matricula" not in prompt
    for value in PII_VALUES:
        assert value not in prompt
    assert "R$ 1.234.567,89" in prompt and "2,45%" in prompt and "março de 2026" in prompt


def test_database_errors_are_retried_with_backoff_provider_errors_never(llm, tenant, settings):
    llm.status(500).status(500)  # the call and its retry
    result = Result.objects.create(
        tenant=tenant, result_id="r-db", verdict="ok", totals={"custo": "10"}, payload_hash="x"
    )
    real_run = services.explanation_run
    calls = []

    def flaky(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real_run(**kwargs)

    with mock.patch("explanations.tasks.explanation_run", side_effect=flaky):
        outcome = explain_result.apply(args=[result.pk], throw=False).get()
    assert len(calls) == 2  # one retry for the database error
    assert outcome["outcome"] == "provider_unavailable"
    assert len(llm.requests) == 2  # 1 call + LLM_MAX_RETRIES inside it; no task retry for the provider
    assert explain_result.acks_late and explain_result.reject_on_worker_lost
    assert explain_result.autoretry_for == (OperationalError, __import__("django.db").db.InterfaceError)
    assert explain_result.retry_backoff


def test_offline_provider_writes_a_verified_narrative(
    api_client, payroll_payload, settings, django_capture_on_commit_callbacks
):
    settings.LLM_PROVIDER = "offline"
    post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    body = api_client.get(explanation_url("sim-2026-03-0001")).json()
    assert body["outcome"] == "verified", Explanation.objects.get().unmatched_numbers
    assert "R$ 1.234.567,89" in body["narrative"]


# --- nothing accepted is lost ---------------------------------------------------------


@pytest.fixture
def dead_broker(real_broker):
    """The Celery app publishing to a port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    previous = real_broker.conf.broker_url, real_broker.conf.broker_write_url
    real_broker.conf.broker_url = real_broker.conf.broker_write_url = f"redis://127.0.0.1:{port}/0"
    _drop_connection_pools(real_broker)
    yield
    real_broker.conf.broker_url, real_broker.conf.broker_write_url = previous
    _drop_connection_pools(real_broker)


def _drop_connection_pools(app):
    app._pool = None
    app.amqp._producer_pool = None


def test_broker_down_at_post_keeps_the_result_pending_and_the_sweep_enqueues_it(
    api_client, llm, payroll_payload, dead_broker, real_broker, django_capture_on_commit_callbacks
):
    llm.reply(VERIFIED_NARRATIVE)
    response = post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert response.status_code == 201
    assert response.json()["status"] == "pending"
    result = Result.objects.get()
    assert result.explanation_status == Result.ExplanationStatus.PENDING
    assert len(llm.requests) == 0

    # The broker is back (eager here: the real worker test covers Redis).
    real_broker.conf.task_always_eager = True
    call_command("sweep_pending_explanations", "--grace=0")
    result.refresh_from_db()
    assert (result.explanation_status, result.explanation_outcome) == ("done", "verified")
    assert len(llm.requests) == 1


def test_sweep_skips_recent_pending_and_done_results(llm, tenant):
    llm.reply("ok")
    Result.objects.create(tenant=tenant, result_id="fresh", verdict="ok", payload_hash="x")
    Result.objects.create(
        tenant=tenant,
        result_id="done",
        verdict="ok",
        payload_hash="x",
        explanation_status="done",
        explanation_outcome="verified",
    )
    assert services.results_sweep_pending() == 0  # within the grace period
    assert len(llm.requests) == 0


def test_sweep_re_enqueues_a_queued_result_whose_message_was_lost(llm, tenant):
    from datetime import timedelta

    from django.utils import timezone

    from explanations.tasks import sweep_pending_explanations

    llm.reply("Custo de R$ 10,00.")
    long_ago = timezone.now() - timedelta(hours=2)
    lost = Result.objects.create(
        tenant=tenant, result_id="lost", verdict="ok", totals={"custo": "10"}, payload_hash="x",
        explanation_status="queued", enqueued_at=long_ago,
    )  # fmt: skip
    Result.objects.filter(pk=lost.pk).update(updated_at=long_ago)
    assert sweep_pending_explanations.apply().get() == 1
    lost.refresh_from_db()
    assert (lost.explanation_status, lost.explanation_outcome) == ("done", "verified")


def test_a_result_deleted_after_enqueue_is_skipped(llm):
    assert explain_result.apply(args=[987654]).get() is None
    assert len(llm.requests) == 0


def test_beat_schedule_runs_the_sweep(settings):
    from config.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["explanations-sweep-pending"]
    assert entry["task"] == "explanations.sweep_pending"
    assert entry["task"] in app.tasks


def test_retry_service_explains_again_only_after_provider_unavailable(llm, tenant, django_capture_on_commit_callbacks):
    from explanations.exceptions import ExplanationNotRetriableError

    result = Result.objects.create(
        tenant=tenant, result_id="r-retry", verdict="ok", totals={"custo": "10"}, payload_hash="x",
        explanation_status="done", explanation_outcome="provider_unavailable",
    )  # fmt: skip
    llm.reply("Custo de R$ 10,00.")
    with django_capture_on_commit_callbacks(execute=True):
        services.result_explanation_retry(acting_user=None, result=result)
    result.refresh_from_db()
    assert result.explanation_outcome == "verified"
    with pytest.raises(ExplanationNotRetriableError):
        services.result_explanation_retry(acting_user=None, result=result)


def test_explanation_url_names_resolve():
    assert reverse("explanations:result-create") == RESULTS_URL
    assert reverse("explanations:result-explanation", args=["abc"]) == explanation_url("abc")


@pytest.fixture
def hung_broker(real_broker):
    """A broker that accepts TCP connections and never answers (a hung Redis,
    or a host behind a firewall that drops replies)."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    previous = real_broker.conf.broker_url, real_broker.conf.broker_write_url
    real_broker.conf.broker_url = real_broker.conf.broker_write_url = f"redis://127.0.0.1:{server.getsockname()[1]}/0"
    _drop_connection_pools(real_broker)
    yield
    real_broker.conf.broker_url, real_broker.conf.broker_write_url = previous
    _drop_connection_pools(real_broker)
    stop.set()
    thread.join(timeout=5)
    for conn in held:
        conn.close()
    server.close()


def test_a_hung_broker_at_post_times_out_and_keeps_the_result_pending(
    api_client, llm, payroll_payload, hung_broker, django_capture_on_commit_callbacks
):
    import signal
    import time

    def hung(signum, frame):  # without socket timeouts the publish would block for good
        raise TimeoutError("the POST hung on the broker")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(45)
    started = time.monotonic()
    try:
        response = post_result(api_client, payroll_payload, django_capture_on_commit_callbacks)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.monotonic() - started
    assert response.status_code == 201
    assert response.json()["status"] == "pending"
    assert Result.objects.get().explanation_status == Result.ExplanationStatus.PENDING
    # Bounded by the broker socket timeouts (settings), not by TCP's minutes.
    assert elapsed < 40, elapsed
