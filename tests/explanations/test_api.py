"""POST /api/v1/results and GET /api/v1/results/{result_id}/explanation."""

import pytest

from explanations.models import Result

from .conftest import VERIFIED_NARRATIVE

pytestmark = pytest.mark.django_db

RESULTS_URL = "/api/v1/results"


def test_post_stores_the_result_with_decimals_as_strings(api_client, llm, payroll_payload, tenant, user):
    llm.reply(VERIFIED_NARRATIVE)
    response = api_client.post(RESULTS_URL, payroll_payload, format="json")
    assert response.status_code == 201
    result = Result.objects.get()
    assert (result.tenant, result.created_by, result.result_id) == (tenant, user, "sim-2026-03-0001")
    assert result.totals["diferenca_pct"] == "0.0245"
    assert result.breakdowns["loja"] == {"0423": "18000", "0107": "11567.89"}
    assert result.pii_keys == ["matricula"]
    assert result.rule_specifics.startswith("Reajuste")


def test_json_numbers_are_accepted_too(api_client, llm):
    llm.reply("Custo de R$ 1.234,50.")
    response = api_client.post(
        RESULTS_URL, {"result_id": "n1", "verdict": "ok", "totals": {"custo": 1234.5}}, format="json"
    )
    assert response.status_code == 201
    assert Result.objects.get().totals == {"custo": "1234.5"}


def test_same_result_again_is_idempotent_and_different_facts_conflict(
    api_client, llm, payroll_payload, django_capture_on_commit_callbacks
):
    llm.reply(VERIFIED_NARRATIVE)
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.post(RESULTS_URL, payroll_payload, format="json").status_code == 201
    again = api_client.post(RESULTS_URL, payroll_payload, format="json")
    assert again.status_code == 200
    assert again.json()["outcome"] == "verified"

    payroll_payload["totals"]["simulado"] = "1.00"
    conflict = api_client.post(RESULTS_URL, payroll_payload, format="json")
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "RESULT_ALREADY_EXISTS"
    assert Result.objects.count() == 1
    assert len(llm.requests) == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"totals": {"custo": "abc"}}, "totals"),
        ({"period": "2026-13"}, "period"),
        ({"units": {"custo": "kg"}}, "units"),
        ({"result_id": "has space"}, "result_id"),
        ({"unknown": 1}, "unknown"),
        ({"rule": {"core": "x", "numbers": [{"value": "1", "kind": "weird"}]}}, "rule"),
        ({"period": "2026-Q5"}, "period"),
        ({"period": "2026-S3"}, "period"),
        ({"units": {"custo": "currency:GBP"}}, "units"),
        ({"counts": {"lojas": "cinco"}}, "counts"),
        ({"counts": {"lojas": 2.5}}, "counts"),
        ({"labels": {"budget": "orçamento"}}, "labels"),
        ({"rounding": "nearest"}, "rounding"),
    ],
)
def test_invalid_results_are_400_and_leave_no_rows(api_client, change, field):
    payload = {"result_id": "bad-1", "verdict": "ok", **change}
    response = api_client.post(RESULTS_URL, payload, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"]["fields"]
    assert not Result.objects.exists()


def test_explanation_of_another_tenants_result_is_404(api_client, other_api_client, llm, payroll_payload):
    llm.reply(VERIFIED_NARRATIVE)
    api_client.post(RESULTS_URL, payroll_payload, format="json")
    response = other_api_client.get("/api/v1/results/sim-2026-03-0001/explanation")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "RESULT_NOT_FOUND"


def test_the_same_result_id_in_two_tenants_are_two_results(api_client, other_api_client, llm, payroll_payload):
    llm.reply(VERIFIED_NARRATIVE)
    assert api_client.post(RESULTS_URL, payroll_payload, format="json").status_code == 201
    assert other_api_client.post(RESULTS_URL, payroll_payload, format="json").status_code == 201
    first, second = Result.objects.order_by("pk")
    assert first.explanation_id != second.explanation_id


def test_pending_explanation_shape(api_client, tenant):
    Result.objects.create(tenant=tenant, result_id="p1", verdict="ok", payload_hash="x")
    body = api_client.get("/api/v1/results/p1/explanation").json()
    assert body == {
        "result_id": "p1",
        "status": "pending",
        "outcome": None,
        "verified": None,
        "narrative": None,
        "explanation_id": None,
        "explained_at": None,
    }


def test_results_api_requires_authentication(anon_client):
    assert anon_client.post(RESULTS_URL, {}, format="json").status_code == 401
    assert anon_client.get("/api/v1/results/x/explanation").status_code == 401


def test_endpoints_are_in_the_openapi_schema(api_client):
    schema = api_client.get("/api/schema/?format=json").json()
    assert "/api/v1/results" in schema["paths"]
    assert "/api/v1/results/{result_id}/explanation" in schema["paths"]


def test_explanation_read_is_a_fixed_number_of_queries(api_client, tenant, django_assert_num_queries):
    Result.objects.create(tenant=tenant, result_id="q1", verdict="ok", payload_hash="x")
    api_client.get("/api/v1/results/q1/explanation")  # warm the token/tenant path once
    # token+user+membership+tenant (authentication, one join), then the result with its explanation
    with django_assert_num_queries(2):
        assert api_client.get("/api/v1/results/q1/explanation").status_code == 200


def test_counts_units_labels_rounding_and_periods_are_accepted_and_stored(
    api_client, llm, django_capture_on_commit_callbacks
):
    llm.reply("No 2º trimestre de 2026, 5 lojas venderam US$ 1.200,50.")
    payload = {
        "result_id": "q2-1",
        "verdict": "ok",
        "period": "2026-Q2",
        "totals": {"vendas": "1200.50", "variacao_pp": "0.012"},
        "units": {"vendas": "currency:USD", "variacao_pp": "percentage_points"},
        "counts": {"lojas": 5},
        "labels": {"budget": ["orçamento", "teto"], "filial": ["unidade"]},
        "rounding": "scale",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.post(RESULTS_URL, payload, format="json").status_code == 201
    assert api_client.get("/api/v1/results/q2-1/explanation").json()["outcome"] == "verified"
    result = Result.objects.get()
    assert (result.period, result.counts, result.rounding) == ("2026-Q2", {"lojas": 5}, "scale")
    assert result.labels == {"budget": ["orçamento", "teto"], "filial": ["unidade"]}
    assert result.explanation.rounding == "scale"
    for period in ("2026", "2026-S1", "2026-07"):
        assert (
            api_client.post(
                RESULTS_URL, {**payload, "result_id": f"p-{period}", "period": period}, format="json"
            ).status_code
            == 201
        )


def test_a_result_sent_before_the_new_fields_keeps_its_hash(api_client, llm, payroll_payload):
    # Idempotency must survive the upgrade: empty counts/labels and the default rounding hash as before.
    llm.reply(VERIFIED_NARRATIVE)
    assert api_client.post(RESULTS_URL, payroll_payload, format="json").status_code == 201
    before = Result.objects.get().payload_hash
    explicit = {**payroll_payload, "counts": {}, "labels": {}, "rounding": "exact"}
    assert api_client.post(RESULTS_URL, explicit, format="json").status_code == 200
    assert Result.objects.get().payload_hash == before
