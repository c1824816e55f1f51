"""A host application's webhook on 127.0.0.1 for action tests.

Each POST is recorded (headers, raw body) and answered by the next scripted
behaviour: ``echo`` (the requested value, as a host that applied it),
``value(v)`` (a fixed value: a host that changed something else), ``status(n)``
or ``sleep(s)`` (slower than the timeout). Re-delivered idempotency keys are
answered from the host's own store, as a well-behaved host does.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class WebhookRequest:
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> dict:
        return json.loads(self.raw)


class WebhookServer:
    def __init__(self):
        self.requests: list[WebhookRequest] = []
        self.script: deque = deque()
        self.applied: dict[str, object] = {}  # idempotency key → value the host applied
        self.on_request = None  # optional callable(request) run before answering (e.g. read the DB)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address
        return f"http://{host}:{port}/hooks/contexto"

    def echo(self):
        self.script.append(("echo", None))

    def value(self, v):
        self.script.append(("value", v))

    def status(self, code: int):
        self.script.append(("status", code))

    def sleep(self, seconds: float):
        self.script.append(("sleep", seconds))

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = WebhookRequest({k: v for k, v in self.headers.items()}, raw)
                outer.requests.append(request)
                if outer.on_request:
                    outer.on_request(request)
                kind, arg = outer.script.popleft() if outer.script else ("echo", None)
                key = self.headers.get("Idempotency-Key") or ""
                if kind == "sleep":
                    time.sleep(arg)
                    kind = "echo"
                if kind == "status":
                    self._answer(arg, {"error": "refused"})
                    return
                if kind == "value":
                    value = arg
                elif key in outer.applied:
                    value = outer.applied[key]
                else:
                    value = request.body["parameters"]["value"]
                outer.applied.setdefault(key, value)
                self._answer(200, {"value": value})

            def _answer(self, code, data):
                body = json.dumps(data).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        return Handler

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def webhook_server():
    server = WebhookServer().start()
    yield server
    server.stop()
