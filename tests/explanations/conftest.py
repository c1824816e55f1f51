"""Fixtures for the explanation step: a scripted OpenAI-compatible server on a
real local socket, and the T-317 payroll result (seed 003) as an API payload."""

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config.celery import app as celery_app


class ScriptedLLM:
    """An OpenAI-compatible /chat/completions server. Each request takes the
    next scripted step (the last one repeats):
      ("reply", text)          200 with the text as the message content
      ("delay", seconds, text) the same, after sleeping (past a timeout)
      ("status", code)         an HTTP error
      ("empty",)               200 with an empty content
    """

    def __init__(self):
        self.steps: deque = deque([("reply", "")])
        self.requests: list[dict] = []
        self.received = threading.Event()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                    step = server.steps.popleft() if len(server.steps) > 1 else server.steps[0]
                server.received.set()
                kind = step[0]
                if kind == "delay":
                    time.sleep(step[1])
                    kind, step = "reply", ("reply", step[2])
                if kind == "status":
                    self._send(step[1], {"error": {"message": "scripted failure"}})
                    return
                content = "" if kind == "empty" else step[1]
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                    },
                )

            def _send(self, code, payload):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def script(self, *steps):
        with self._lock:
            self.steps = deque(steps)
            self.received.clear()

    @property
    def calls(self) -> int:
        return len(self.requests)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def llm_server():
    server = ScriptedLLM().start()
    yield server
    server.stop()


@pytest.fixture
def llm(settings, llm_server):
    """Point the explanation step at the scripted server."""
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_MODEL = "scripted-model"
    settings.LLM_MAX_RETRIES = 1
    settings.EXPLANATION_LLM_TIMEOUT = 2.0
    return llm_server


# The seed's example (T-317): a payroll simulation for March 2026 across stores.
PAYROLL_RESULT = {
    "result_id": "sim-2026-03-0001",
    "verdict": "Simulação viável: o custo simulado fica dentro do orçamento",
    "period": "2026-03",
    "totals": {
        "simulado": "1234567.89",
        "baseline": "1205000.00",
        "diferenca": "29567.89",
        "diferenca_pct": "0.0245",
    },
    "breakdowns": {
        "loja": {"0423": "18000.00", "0107": "11567.89"},
        "matricula": {"884213": "5234.11", "771902": "4987.65"},
    },
    "budget": "1250000.00",
    "rule": {
        "core": "O custo da folha não pode passar do orçamento da competência.",
        "specifics": "Reajuste de 3,5% para quem ganha até R$ 5 mil.",
        "numbers": [],
    },
    "pii_keys": ["matricula"],
}

VERIFIED_NARRATIVE = (
    "Na competência de março de 2026, o custo simulado foi de R$ 1.234.567,89, "
    "2,45% acima do baseline, e ficou dentro do orçamento. A maior parte do aumento "
    "veio da loja 0423, que somou R$ 18.000,00."
)
# 18000 / 29567.89 = 60.88%: a share the model computed, which nobody gave it.
REJECTED_NARRATIVE = (
    "Na competência de março de 2026, o custo simulado foi de R$ 1.234.567,89. "
    "A loja 0423 respondeu por 60,88% da diferença."
)
PII_VALUES = ["884213", "771902", "5.234,11", "4.987,65", "5234.11", "4987.65"]


@pytest.fixture
def payroll_payload():
    return json.loads(json.dumps(PAYROLL_RESULT))


@pytest.fixture
def real_broker():
    """Publish to the real Redis broker (TEST_REDIS_URL) instead of running eagerly."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    yield celery_app
    celery_app.conf.task_always_eager = previous
