from knowledge.services import package_set_active, package_update


def test_package_list_is_the_active_catalog_in_order(api_client, catalog):
    response = api_client.get("/api/v1/packages")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 15
    assert body["catalog_version"] == catalog.version
    first = body["results"][0]
    assert set(first) == {"id", "title", "summary", "kind", "strict", "aliases", "revision", "catalog_version"}
    assert [r["id"] for r in body["results"]] == catalog.ids


def test_package_detail_by_id_or_alias(api_client, catalog):
    by_id = api_client.get("/api/v1/packages/PRICING_RULES").json()
    by_alias = api_client.get("/api/v1/packages/precos").json()
    assert by_id == by_alias
    assert by_id["id"] == "PRICING_RULES" and by_id["body"] and by_id["revision"] == 1


def test_unknown_package_is_404(api_client, catalog):
    response = api_client.get("/api/v1/packages/NOPE")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "PACKAGE_NOT_FOUND"


def test_inactive_package_is_404_and_leaves_the_list(api_client, catalog):
    from knowledge.models import Package

    package_set_active(acting_user=None, package=Package.objects.get(package_id="PRICING_RULES"), active=False)
    assert api_client.get("/api/v1/packages/PRICING_RULES").status_code == 404
    assert api_client.get("/api/v1/packages/PRECOS").status_code == 404
    ids = [r["id"] for r in api_client.get("/api/v1/packages").json()["results"]]
    assert "PRICING_RULES" not in ids and len(ids) == 14


def test_an_edit_reaches_the_next_request(api_client, catalog):
    from knowledge.models import Package

    package = Package.objects.get(package_id="PRICING_RULES")
    before = api_client.get("/api/v1/packages/PRICING_RULES").json()
    package_update(acting_user=None, package=package, data={**package.content(), "body": "Novo corpo."}, note="t")
    after = api_client.get("/api/v1/packages/PRICING_RULES").json()
    assert after["body"] == "Novo corpo."
    assert after["revision"] == before["revision"] + 1
    assert after["catalog_version"] > before["catalog_version"]


def test_openapi_schema_and_docs_are_served(client, db):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/packages" in schema.content
    assert client.get("/api/docs/").status_code == 200


def test_unknown_api_path_is_json_404(client, db, settings):
    settings.DEBUG = True
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
