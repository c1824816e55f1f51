"""``/mcp/``: the MCP Streamable HTTP endpoint, served by Django's WSGI stack.

The SDK's transport is an ASGI application; Contexto is served by runserver,
gunicorn and the test live server, all WSGI. Rather than switch the whole
server to ASGI, this view authenticates the request the Django way (API token,
tenant), then drives the SDK's session manager in *stateless, JSON-response*
mode for this one request (``async_to_sync``): no state lives in the process,
so any worker of any process can answer any request. What must outlive a
request (the MCP session's fetch budget and hand-offs) is in the database
(``McpSession`` → ``conversations.Session``). See docs/mcp.md.
"""

from __future__ import annotations

import json
import logging
import time

from asgiref.sync import async_to_sync
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from rest_framework.authtoken.models import Token

from accounts.selectors import tenant_for_user
from common.exception_handler import error_body
from common.input_guard import text_problem
from mcp_server import services
from mcp_server.server import build_server, current_caller

logger = logging.getLogger("mcp_server")

SESSION_HEADER = "Mcp-Session-Id"
_server = None


def _mcp_server():
    global _server
    if _server is None:
        _server = build_server()
    return _server


def _error(status: int, code: str, message: str, **headers) -> JsonResponse:
    response = JsonResponse(error_body(code, message), status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def _jsonrpc_error(status: int, message: str) -> JsonResponse:
    return JsonResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}, status=status)


def _token_user(request: HttpRequest):
    """The API token's user: `Authorization: Bearer <token>` (what MCP hosts send) or `Token <token>`."""
    parts = request.headers.get("Authorization", "").split()
    if len(parts) != 2 or parts[0].lower() not in ("bearer", "token") or text_problem(parts[1]):
        return None  # a NUL cannot be in any token, and PostgreSQL refuses it in a query (500)
    token = Token.objects.select_related("user").filter(key=parts[1]).first()
    if token is None or not token.user.is_active:
        return None
    return token.user


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


def _initialized(status: int, content: bytes) -> bool:
    """The SDK answered the initialize request with a result (not a JSON-RPC error, which it sends
    with 200 too): only then is there an MCP session to open."""
    if status != 200:
        return False
    try:
        answer = json.loads(content)
    except ValueError:
        return False
    return isinstance(answer, dict) and "result" in answer


def _scope(request: HttpRequest) -> dict:
    headers = [
        (key[5:].replace("_", "-").lower().encode("latin-1"), value.encode("latin-1"))
        for key, value in request.META.items()
        if key.startswith("HTTP_") and isinstance(value, str)
    ]
    if request.META.get("CONTENT_TYPE"):
        headers.append((b"content-type", request.META["CONTENT_TYPE"].encode("latin-1")))
    if request.META.get("CONTENT_LENGTH"):
        headers.append((b"content-length", request.META["CONTENT_LENGTH"].encode("latin-1")))
    host = request.get_host()
    server_name, _, port = host.partition(":")
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        "headers": headers,
        "server": (server_name, int(port) if port.isdigit() else 80),
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
    }


async def _serve(scope: dict, body: bytes, caller: services.McpCaller) -> tuple[int, list, bytes]:
    """One request through the SDK: a fresh stateless manager, so nothing is shared between requests."""
    current_caller.set(caller)
    manager = StreamableHTTPSessionManager(
        app=_mcp_server(), json_response=True, stateless=True, max_request_body_size=settings.API_MAX_BODY_BYTES
    )
    sent = {"status": 500, "headers": [], "body": b""}
    delivered = False

    async def receive():
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"] = message["status"]
            sent["headers"] = message.get("headers") or []
        elif message["type"] == "http.response.body":
            sent["body"] += message.get("body", b"")

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return sent["status"], sent["headers"], sent["body"]


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    started = time.monotonic()
    user = _token_user(request)
    if user is None:
        return _error(
            401,
            "NOT_AUTHENTICATED",
            "An API token is required (Authorization: Bearer <token>).",
            WWW_Authenticate='Bearer realm="contexto"',
        )
    tenant = tenant_for_user(user)
    if tenant is None:
        return _error(403, "NO_TENANT", "This user is not a member of an active tenant.")
    if request.method == "GET":
        # No server-initiated messages: no standalone SSE stream (the specification allows a 405).
        return _error(
            405, "METHOD_NOT_ALLOWED", "This MCP endpoint has no event stream; POST messages.", Allow="POST, DELETE"
        )
    session_key = request.headers.get(SESSION_HEADER) or None
    if session_key and text_problem(session_key):
        return _jsonrpc_error(404, "Session not found")  # no key holds a NUL; PostgreSQL refuses one (500)
    if request.method == "DELETE":
        if session_key and services.mcp_session_close(key=session_key, user=user):
            return HttpResponse(status=204)
        return _jsonrpc_error(404, "Session not found")
    if request.method != "POST":
        return _error(405, "METHOD_NOT_ALLOWED", "Use POST.", Allow="POST, DELETE")
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return _error(400, "MALFORMED_REQUEST", "Invalid Content-Length header.")
    if length > settings.API_MAX_BODY_BYTES:
        return _error(413, "REQUEST_TOO_LARGE", "The request body is too large.")
    body = request.body
    initialize = _is_initialize(body)
    if session_key and not initialize and not services.mcp_session_known(key=session_key, user=user):
        # Unknown, closed or another token's session: the client must initialize again (MCP spec: 404).
        return _jsonrpc_error(404, "Session not found")
    # An initialize request runs no tool, so it needs no session key; the session is opened only
    # once the SDK accepted the handshake (a refused one left a row no client would ever use).
    caller = services.McpCaller(user_id=user.pk, tenant_id=tenant.pk, session_key=None if initialize else session_key)
    status, headers, content = async_to_sync(_serve)(_scope(request), body, caller)
    response = HttpResponse(content, status=status)
    for name, value in headers:
        name = name.decode("latin-1")
        if name.lower() not in ("content-length",):
            response[name] = value.decode("latin-1")
    if initialize and _initialized(status, content):
        response[SESSION_HEADER] = services.mcp_session_open(user=user, tenant=tenant).key
    logger.info(
        "mcp request status=%s tenant=%s initialize=%s ms=%s",
        status,
        tenant.pk,
        initialize,
        int((time.monotonic() - started) * 1000),
    )
    return response
