"""Every API error has one JSON shape and the right status; never a 500."""

import pytest
from django.urls import path
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import ApplicationError
from common.serializers import StrictSerializer


class EchoApi(APIView):
    class InputSerializer(StrictSerializer):
        name = serializers.CharField(max_length=10)
        count = serializers.IntegerField(min_value=0)

    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(serializer.validated_data)


class BoomApi(APIView):
    def get(self, request):
        raise ApplicationError("Stale.", code="STALE_CONTEXT_AGE", status_code=409, details={"age": 301})


class CrashApi(APIView):
    def get(self, request):
        raise RuntimeError("bug")


urlpatterns = [
    path("api/v1/echo", EchoApi.as_view()),
    path("api/v1/boom", BoomApi.as_view()),
    path("api/v1/crash", CrashApi.as_view()),
]

pytestmark = pytest.mark.urls(__name__)


def test_valid_input_passes(api_client):
    response = api_client.post("/api/v1/echo", {"name": "ok", "count": 1}, format="json")
    assert response.status_code == 200


def test_malformed_json_is_400_with_the_error_shape(api_client):
    response = api_client.post("/api/v1/echo", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "MALFORMED_REQUEST"
    assert set(response.json()["error"]) == {"code", "message", "details"}


def test_wrong_types_name_the_field(api_client):
    response = api_client.post("/api/v1/echo", {"name": "ok", "count": "many"}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert "count" in error["details"]["fields"]
    assert error["message"].startswith("Invalid input: count")


def test_unknown_fields_are_refused(api_client):
    response = api_client.post("/api/v1/echo", {"name": "ok", "count": 1, "nmae": "x"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"] == {"nmae": ["Unknown field."]}


def test_a_json_list_instead_of_an_object_is_400(api_client):
    response = api_client.post("/api/v1/echo", [1, 2], format="json")
    assert response.status_code == 400


def test_oversize_body_is_413_before_parsing(api_client, settings):
    settings.API_MAX_BODY_BYTES = 1024
    response = api_client.post("/api/v1/echo", {"name": "x" * 2000, "count": 1}, format="json")
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "REQUEST_TOO_LARGE"


def test_unsupported_media_type_is_415(api_client):
    response = api_client.post("/api/v1/echo", data="name=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_application_errors_keep_code_status_and_details(api_client):
    response = api_client.get("/api/v1/boom")
    assert response.status_code == 409
    assert response.json() == {"error": {"code": "STALE_CONTEXT_AGE", "message": "Stale.", "details": {"age": 301}}}


def test_method_not_allowed_is_405_json(api_client):
    response = api_client.delete("/api/v1/boom")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_unexpected_errors_are_json_and_logged_without_content(api_client, caplog):
    response = api_client.get("/api/v1/crash")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "INTERNAL_ERROR"
    assert "bug" not in response.content.decode()
