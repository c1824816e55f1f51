"""Unknown /api/ paths answer the JSON error shape for every method (real urlconf)."""

import pytest
from django.test import Client


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_unknown_api_path_is_a_json_404_even_without_a_csrf_token(db, method):
    # A token client (contexto.js with `token`) sends no CSRF cookie; a wrong endpoint must read
    # as "not found", not as Django's HTML "CSRF verification failed" page.
    client = Client(enforce_csrf_checks=True)
    response = getattr(client, method)("/api/v2/sessions/1/messages", data="{}", content_type="application/json")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "NOT_FOUND", "message": "No API endpoint at this path.", "details": {}}
    }
