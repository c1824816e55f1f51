"""POST /api/v1/context: the router over HTTP, and its errors for bad input."""

import pytest

URL = "/api/v1/context"


def test_context_returns_the_documented_shape(api_client, catalog):
    response = api_client.post(URL, {"message": "Qual o prazo do Sanger e como envio a amostra?"}, format="json")
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {"catalog_version", "parts", "full", "listed", "procedures", "rules", "timings_ms"}
    assert data["catalog_version"] == catalog.version
    assert data["parts"] == ["Qual o prazo do Sanger", "como envio a amostra"]
    assert {tuple(sorted(d)) for d in data["full"]} == {("body", "id", "revision", "score", "title", "why")}
    assert all(set(d) == {"id", "title", "summary", "why"} for d in data["listed"])
    assert {"DELIVERY_TIMELINES", "SAMPLE_INSTRUCTIONS"} <= {d["id"] for d in data["full"]}
    assert data["timings_ms"]["total"] >= 0


def test_context_uses_the_ui_focus_budget_and_max_full(api_client, catalog):
    response = api_client.post(
        URL,
        {
            "message": "Explique isso.",
            "context": {"focus": {"semanticId": "quote.discount", "type": "field", "parentIds": ["quote"]}},
            "budget_tokens": 4000,
            "max_full": 1,
        },
        format="json",
    )
    assert response.status_code == 200
    data = response.json()
    assert [d["id"] for d in data["full"]] == ["PRICING_RULES"]
    assert data["full"][0]["why"][0]["signal"] == "semantic"


def test_context_requires_authentication(anon_client, catalog):
    response = anon_client.post(URL, {"message": "prazo"}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "NOT_AUTHENTICATED"


@pytest.mark.parametrize(
    "body,field",
    [
        ({}, "message"),
        ({"message": ""}, "message"),
        ({"message": "   "}, "message"),
        ({"message": 42, "max_full": "x"}, "max_full"),
        ({"message": "x" * 4001}, "message"),
        ({"message": "prazo", "budget_tokens": "muito"}, "budget_tokens"),
        ({"message": "prazo", "budget_tokens": 10}, "budget_tokens"),
        ({"message": "prazo", "max_full": -1}, "max_full"),
        ({"message": "prazo", "max_full": 100}, "max_full"),
        ({"message": "prazo", "context": ["workPermit"]}, "context"),
        ({"message": "prazo", "context": {"focus": "not a semantic id!"}}, "context"),
        ({"message": "prazo", "context": {"focus": {"semanticId": 7}}}, "context"),
        ({"message": "prazo", "context": {"parentIds": "workPermit"}}, "context"),
        ({"message": "prazo", "mesage": "typo"}, "mesage"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api_client, catalog, body, field):
    response = api_client.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert field in error["details"] or field in error["message"]


def test_an_oversized_context_is_a_413(api_client, catalog):
    response = api_client.post(URL, {"message": "prazo", "context": {"focus": "a", "blob": "x" * 6000}}, format="json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "CONTEXT_SIZE_LIMIT_EXCEEDED"


def test_malformed_json_is_a_400(api_client, catalog):
    response = api_client.generic("POST", URL, "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "MALFORMED_REQUEST"


def test_only_post_is_allowed(api_client, catalog):
    response = api_client.get(URL)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
