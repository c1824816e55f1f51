"""Metrics (counter by outcome, duration histogram, /metrics) and logs without
content; the admin for operators and auditors."""

import logging

import pytest
from django.contrib.auth import get_user_model
from prometheus_client import REGISTRY

from explanations.admin import highlight_unmatched
from explanations.models import Explanation, Result

from .conftest import PII_VALUES, REJECTED_NARRATIVE, VERIFIED_NARRATIVE

pytestmark = pytest.mark.django_db


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


def explain(api_client, payload, capture):
    with capture(execute=True):
        assert api_client.post("/api/v1/results", payload, format="json").status_code == 201


@pytest.mark.parametrize(
    ("script", "outcome"),
    [
        (lambda s: s.reply(VERIFIED_NARRATIVE), "verified"),
        (lambda s: s.reply(REJECTED_NARRATIVE), "rejected"),
        (lambda s: s.reply(""), "no_response"),
        (lambda s: s.status(500).status(500), "provider_unavailable"),
    ],
)
def test_counter_by_outcome_and_duration_histogram(
    api_client, llm, payroll_payload, script, outcome, django_capture_on_commit_callbacks
):
    script(llm)
    before = sample("contexto_explanations_total", outcome=outcome)
    before_count = sample("contexto_explanation_duration_seconds_count")
    explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    assert sample("contexto_explanations_total", outcome=outcome) == before + 1
    assert sample("contexto_explanation_duration_seconds_count") == before_count + 1


def test_duration_is_recorded_when_the_step_fails(llm, tenant, monkeypatch):
    from django.db import OperationalError

    from explanations import services

    llm.reply("ok")
    result = Result.objects.create(tenant=tenant, result_id="r-fail", verdict="ok", payload_hash="x")
    monkeypatch.setattr(services, "_record_outcome", lambda **kw: (_ for _ in ()).throw(OperationalError("db down")))
    errors = sample("contexto_explanations_total", outcome="error")
    count = sample("contexto_explanation_duration_seconds_count")
    with pytest.raises(OperationalError):
        services.explanation_run(result_pk=result.pk)
    assert sample("contexto_explanations_total", outcome="error") == errors + 1
    assert sample("contexto_explanation_duration_seconds_count") == count + 1


def test_rerun_without_model_call_is_not_counted_again(
    api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    from explanations.tasks import explain_result

    llm.reply(VERIFIED_NARRATIVE)
    explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    verified = sample("contexto_explanations_total", outcome="verified")
    explain_result.apply(args=[Result.objects.get().pk])
    assert sample("contexto_explanations_total", outcome="verified") == verified


def test_metrics_endpoint_exposes_the_registry(
    client, settings, api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    llm.reply(VERIFIED_NARRATIVE)
    explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert 'contexto_explanations_total{outcome="verified"}' in text
    assert "contexto_explanation_duration_seconds_bucket" in text

    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_metrics_aggregate_other_processes_in_multiprocess_mode(client, tmp_path, monkeypatch):
    """What a Celery worker wrote to PROMETHEUS_MULTIPROC_DIR is served by the web process."""
    import subprocess
    import sys

    script = (
        "from explanations.metrics import EXPLANATIONS, EXPLANATION_DURATION\n"
        "EXPLANATIONS.labels(outcome='rejected').inc(3)\n"
        "EXPLANATION_DURATION.observe(1.5)\n"
    )
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # two worker processes
        subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=str(_repo_root()))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    text = client.get("/metrics").content.decode()
    assert 'contexto_explanations_total{outcome="rejected"} 6.0' in text
    assert "contexto_explanation_duration_seconds_count 2.0" in text


def _repo_root():
    from django.conf import settings

    return settings.BASE_DIR


def test_logs_have_ids_and_outcome_but_no_content(
    api_client, llm, payroll_payload, caplog, django_capture_on_commit_callbacks
):
    llm.reply(REJECTED_NARRATIVE)
    with caplog.at_level(logging.DEBUG):
        explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    explanation = Explanation.objects.get()
    messages = [r.getMessage() for r in caplog.records]
    start = [m for m in messages if m.startswith("explanation.start")]
    finish = [m for m in messages if m.startswith("explanation.finish")]
    assert len(start) == len(finish) == 1
    assert "result_id=sim-2026-03-0001" in start[0] and "task_id=" in start[0]
    assert "result_id=sim-2026-03-0001" in finish[0] and "outcome=rejected" in finish[0]

    everything = "\n".join(messages + [r.getMessage() for r in caplog.records if r.args])
    forbidden = [
        explanation.narrative,
        explanation.prompt[:200],
        "60,88%",
        "1.234.567,89",
        "2,45%",
        "0423",
        "Simulação",
    ]
    forbidden += PII_VALUES
    forbidden += [line for line in explanation.prompt.splitlines() if len(line) > 12]
    for text in forbidden:
        assert text not in everything, text


# --- admin ---------------------------------------------------------------------------------


@pytest.fixture
def auditor_client(client, tenant):
    auditor = get_user_model().objects.create_superuser(username="auditora", password="x", email="a@example.com")
    client.force_login(auditor)
    return client


def test_auditor_sees_the_rejected_narrative_with_unmatched_numbers_highlighted(
    auditor_client, api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    llm.reply(REJECTED_NARRATIVE)
    explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    explanation = Explanation.objects.get()

    page = auditor_client.get(f"/admin/explanations/explanation/{explanation.pk}/change/").content.decode()
    assert '<mark class="unmatched-number reason-not_in_list" title="not in the list">60,88%</mark>' in page
    assert "Regras obrigatórias" in page  # the prompt
    listing = auditor_client.get("/admin/explanations/explanation/?outcome__exact=rejected&verified__exact=0")
    assert listing.status_code == 200 and "sim-2026-03-0001" in listing.content.decode()
    empty = auditor_client.get("/admin/explanations/explanation/?outcome__exact=verified").content.decode()
    assert "sim-2026-03-0001" not in empty
    assert auditor_client.get("/admin/explanations/result/").status_code == 200


def test_highlight_escapes_html():
    html = highlight_unmatched("<b>R$ 5</b> e 7%", [{"start": 14, "end": 16}])
    assert (
        "&lt;b&gt;" in html
        and '<mark class="unmatched-number reason-not_in_list" title="not in the list">7%</mark>' in html
    )


def test_auditor_sees_each_unmatched_number_with_its_reason(
    auditor_client, api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    payroll_payload["breakdowns"]["filial"] = {"Centro": "5000.00", "Norte": "7200.00"}
    payroll_payload["counts"] = {"lojas": 2}
    narrative = (
        "Em maio de 2026 o custo simulado foi de € 1.234.567,89, cerca de R$ 1,2 milhão. "
        "A filial Centro respondeu por R$ 7.200,00. O custo caiu 2,45% em relação ao baseline, "
        "e 9 lojas pesaram."
    )
    llm.reply(narrative)
    explain(api_client, payroll_payload, django_capture_on_commit_callbacks)
    explanation = Explanation.objects.get()
    assert explanation.rounding == "exact"
    reasons = {n["text"]: n["reason"] for n in explanation.unmatched_numbers}
    assert reasons == {
        "maio": "not_in_list",  # the period is March
        "€ 1.234.567,89": "wrong_kind",
        "R$ 1,2 milhão": "rounded",
        "R$ 7.200,00": "wrong_entity",
        "2,45%": "wrong_direction",
        "9 lojas": "not_in_list",
    }

    page = auditor_client.get(f"/admin/explanations/explanation/{explanation.pk}/change/").content.decode()
    for text, label in (
        ("€ 1.234.567,89", "wrong kind"),
        ("R$ 1,2 milhão", "rounded"),
        ("R$ 7.200,00", "wrong entity"),
        ("2,45%", "wrong direction"),
        ("maio", "not in the list"),
    ):
        assert f'title="{label}">{text}</mark> <small class="unmatched-reason">[{label}]</small>' in page, text
        assert f"<mark>{text}</mark> ({label})" in page, text  # the list under the narrative


def test_task_states_are_visible_in_the_admin(auditor_client):
    # django-celery-results stores task states (the real worker test writes one).
    assert auditor_client.get("/admin/django_celery_results/taskresult/").status_code == 200
