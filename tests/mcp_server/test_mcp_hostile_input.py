"""The MCP endpoint never answers 500 nor leaves rows behind for input it cannot use."""

import json

import pytest
from django.test import Client

from conversations.models import Message, Session
from mcp_server.models import McpSession

pytestmark = pytest.mark.django_db

PARAMS = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": PARAMS}
JSON = {"HTTP_ACCEPT": "application/json, text/event-stream", "content_type": "application/json"}


@pytest.fixture
def mcp(user):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {user.auth_token.key}")

    def post(body, **headers):
        return client.post("/mcp/", data=body if isinstance(body, str) else json.dumps(body), **JSON, **headers)

    post.client = client
    return post


def _tool(name, **arguments):
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def test_a_nul_in_the_token_is_401_not_500():
    response = Client().post("/mcp/", data=json.dumps(INITIALIZE), HTTP_AUTHORIZATION="Bearer a\x00b", **JSON)
    assert response.status_code == 401 and response.json()["error"]["code"] == "NOT_AUTHENTICATED"


def test_a_nul_in_the_session_id_is_an_unknown_session(mcp):
    response = mcp({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, HTTP_MCP_SESSION_ID="a\x00b")
    assert response.status_code == 404 and response.json()["error"]["message"] == "Session not found"
    response = mcp.client.delete("/mcp/", HTTP_MCP_SESSION_ID="a\x00b")
    assert response.status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": 1}},  # a JSON-RPC error, HTTP 200
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [1]},  # HTTP 400
        {"jsonrpc": "2.0", "method": "initialize", "params": PARAMS},  # a notification: 202, no answer
    ],
    ids=["bad params", "no params", "params not an object", "no id"],
)
def test_a_refused_initialize_opens_no_session(mcp, body):
    response = mcp(body)
    assert "Mcp-Session-Id" not in response.headers
    assert not McpSession.objects.exists()


def test_an_accepted_initialize_opens_one_session(mcp, user):
    response = mcp(INITIALIZE)
    assert response.status_code == 200 and "result" in response.json()
    session = McpSession.objects.get()
    assert response.headers["Mcp-Session-Id"] == session.key and session.user == user
    assert mcp({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, HTTP_MCP_SESSION_ID=session.key).status_code == 200


@pytest.mark.parametrize(
    "call",
    [
        _tool("route_context", message="prazo\x00"),
        _tool("resolve_reference", message="isso\x00", context={}),
        _tool("get_explanation", result_id="r\x00"),
    ],
    ids=["route_context", "resolve_reference", "get_explanation"],
)
def test_a_nul_in_a_tool_argument_is_a_validation_error_naming_it(mcp, catalog, call):
    response = mcp(call)
    assert response.status_code == 200
    result = response.json()["result"]
    field = next(iter(call["params"]["arguments"]))
    assert result["isError"] is True
    assert result["structuredContent"]["error"] == {
        "code": "VALIDATION_ERROR",
        "message": "Invalid tool arguments.",
        "details": {field: ["Null characters are not allowed."]},
    }
    assert not Message.objects.exists()


def test_an_unexpected_tool_failure_is_an_internal_error_without_its_text(mcp, catalog, monkeypatch):
    from mcp_server import services

    def broken(**kwargs):
        raise RuntimeError("secret detail of the failure")

    monkeypatch.setattr(services, "tool_route_context", broken)
    response = mcp(_tool("route_context", message="prazo"))
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "INTERNAL_ERROR"
    assert "secret" not in response.content.decode()
    assert not Session.objects.exists()


def test_an_unexpected_tool_failure_logs_its_stack_without_its_text(mcp, catalog, monkeypatch, caplog):
    from mcp_server import services

    def broken(**kwargs):
        detail = f"failed on {kwargs['message']}"  # the stack shows this source line: the text stays out of it
        raise RuntimeError(detail)

    monkeypatch.setattr(services, "tool_route_context", broken)
    with caplog.at_level("ERROR", logger="mcp_server"):
        mcp(_tool("route_context", message="prazo do cliente Ana, CPF 123.456.789-09"))
    (record,) = [r for r in caplog.records if r.name == "mcp_server" and r.levelname == "ERROR"]
    logged = record.getMessage()
    # Where it failed: the frames down to the raising function, and the exception's type.
    assert logged.startswith("mcp tool failed tool=route_context error=RuntimeError\nTraceback (most recent call last)")
    assert "in broken" in logged and "in _run_tool" in logged
    assert logged.endswith("builtins.RuntimeError: [message redacted]")
    # Not what it said: neither the exception's text nor the tool's arguments, on any handler.
    assert record.exc_info is None and record.exc_text is None
    assert "CPF" not in logged and "Ana" not in logged and "123.456" not in caplog.text
