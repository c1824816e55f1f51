"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Tests exercise the real HTTP client against it: each POST to
``/v1/chat/completions`` consumes the next scripted behaviour (a reply, a
delayed reply, an HTTP status, a malformed body, empty choices, or a
callable), and every request is recorded so tests can inspect prompts.

Use the ``llm_server`` pytest fixture (re-exported in ``tests/conftest.py``)::

    def test_something(llm_server, settings):
        settings.LLM_PROVIDER = "openai"
        settings.LLM_BASE_URL = llm_server.url
        llm_server.reply_json({"s": 0, "message": "olá"})
        ...
        assert "PRICING_RULES" in llm_server.requests[0].system_prompt
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or the raw text when it was not JSON
    client_port: int = 0  # the client's side of the TCP connection: equal ports, one connection

    @property
    def messages(self) -> list[dict]:
        return self.body.get("messages", []) if isinstance(self.body, dict) else []

    @property
    def system_prompt(self) -> str:
        return "\n".join(m.get("content", "") for m in self.messages if m.get("role") == "system")

    @property
    def user_text(self) -> str:
        users = [m.get("content", "") for m in self.messages if m.get("role") == "user"]
        return users[-1] if users else ""


@dataclass
class Behaviour:
    kind: str  # reply | status | raw | callable | drop
    content: str = ""
    status: int = 200
    delay: float = 0.0
    body: bytes = b""
    func: Callable[[RecordedRequest], "Behaviour | str | dict"] | None = None
    extra: dict = field(default_factory=dict)


def completion_body(content: str, *, model: str = "scripted-model") -> dict:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class ScriptedLLMServer:
    """Threaded HTTP server with a FIFO of scripted behaviours."""

    def __init__(self):
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[RecordedRequest] = []  # requests that found the script empty
        self.keep_alive = False  # True: answer without "Connection: close" (the client may reuse it)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-llm", daemon=True
        )

    # -- lifecycle ---------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL as an OpenAI client expects it (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "ScriptedLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # -- scripting ---------------------------------------------------------
    def _push(self, behaviour: Behaviour) -> "ScriptedLLMServer":
        with self._lock:
            self._queue.append(behaviour)
        return self

    def reply(self, content: str, *, delay: float = 0.0) -> "ScriptedLLMServer":
        """A normal completion whose message content is ``content``."""
        return self._push(Behaviour("reply", content=content, delay=delay))

    def reply_then_close(self, content: str) -> "ScriptedLLMServer":
        """A completion, then the server closes the connection without saying so (as an idle
        timeout would): a client that kept it finds it closed on its next call."""
        return self._push(Behaviour("reply", content=content, extra={"close_silently": True}))

    def drop_after_reading(self) -> "ScriptedLLMServer":
        """Read the request (it counts as received), then close the connection without a reply:
        the server may have acted on it, so a client must not send it again for free."""
        return self._push(Behaviour("drop"))

    def reply_json(self, obj: Any, *, delay: float = 0.0) -> "ScriptedLLMServer":
        """A completion whose content is ``obj`` serialized (a contract reply)."""
        return self.reply(json.dumps(obj, ensure_ascii=False), delay=delay)

    def delay(self, seconds: float, content: str = '{"s": 0, "message": "late"}') -> "ScriptedLLMServer":
        """Reply only after ``seconds`` (longer than the client timeout → timeout)."""
        return self.reply(content, delay=seconds)

    def status(self, code: int = 500, body: str = '{"error": {"message": "scripted failure"}}') -> "ScriptedLLMServer":
        return self._push(Behaviour("status", status=code, body=body.encode()))

    def malformed(self, body: bytes = b"<html>not json</html>") -> "ScriptedLLMServer":
        """HTTP 200 with a body that is not a chat completion."""
        return self._push(Behaviour("raw", status=200, body=body))

    def empty_choices(self) -> "ScriptedLLMServer":
        body = completion_body("")
        body["choices"] = []
        return self._push(Behaviour("raw", status=200, body=json.dumps(body).encode()))

    def call(self, func: Callable[[RecordedRequest], Any]) -> "ScriptedLLMServer":
        """Run ``func(request)`` in the server thread; it returns the reply content
        (str), a contract object (dict) or a ``Behaviour``."""
        return self._push(Behaviour("callable", func=func))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next(self) -> Behaviour | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    # -- HTTP --------------------------------------------------------------
    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json"):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    if not server.keep_alive:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout); nothing to do

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                recorded = RecordedRequest(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body, self.client_address[1]
                )
                with server._lock:
                    server.requests.append(recorded)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                behaviour = server._next()
                if behaviour is None:
                    with server._lock:
                        server.unexpected.append(recorded)
                    self._send(500, b'{"error": {"message": "no scripted behaviour left"}}')
                    return
                behaviour = _resolved(behaviour, recorded)
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                if behaviour.kind == "drop":
                    self.close_connection = True
                    return
                if behaviour.kind == "reply":
                    model = body.get("model", "scripted-model") if isinstance(body, dict) else "scripted-model"
                    payload = json.dumps(completion_body(behaviour.content, model=model or "scripted-model"))
                    self._send(200, payload.encode("utf-8"))
                else:
                    self._send(behaviour.status, behaviour.body)
                if behaviour.extra.get("close_silently"):
                    self.close_connection = True  # an idle timeout the client was not told about

        return Handler


def _resolved(behaviour: Behaviour, recorded: RecordedRequest) -> Behaviour:
    """A callable behaviour's answer to this request, as a behaviour; others as they are."""
    if behaviour.kind != "callable":
        return behaviour
    result = behaviour.func(recorded)
    if isinstance(result, Behaviour):
        return result
    if isinstance(result, dict):
        return Behaviour("reply", content=json.dumps(result, ensure_ascii=False))
    return Behaviour("reply", content=str(result))


@pytest.fixture
def llm_server():
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
