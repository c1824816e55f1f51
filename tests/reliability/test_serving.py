"""The production server (gunicorn, config/gunicorn.conf.py) against slow and odd clients.

A real gunicorn on a loopback port, against this run's test database: stalled
sockets do not starve /healthz, a body shorter than its Content-Length is
answered 408, a chunked body is read.
"""

import http.client
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings

from config.wsgi_body import RequestBodyMiddleware

ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT = 1.5
THREADS = 4

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def gunicorn_server(django_db_setup, django_db_blocker):
    port = _free_port()
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "TEST_REDIS_URL": settings.TEST_REDIS_URL,
        "GUNICORN_READ_TIMEOUT": str(READ_TIMEOUT),
        "GUNICORN_THREADS": str(THREADS),
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi:application",
            "--config",
            "config/gunicorn.conf.py",
            "--bind",
            f"127.0.0.1:{port}",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if _get(port, "/healthz", timeout=1)[0] == 200:
                break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("gunicorn did not start: " + process.stderr.read().decode()[-2000:])
    yield port
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _get(port: int, path: str, timeout: float) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _stalled_sockets(port: int, count: int) -> list[socket.socket]:
    """Clients that start a request and never finish its headers."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sockets.append(sock)
    return sockets


def test_two_idle_sockets_do_not_block_healthz(gunicorn_server):
    stalled = _stalled_sockets(gunicorn_server, 2)
    try:
        time.sleep(0.3)  # let the worker pick them up
        started = time.monotonic()
        assert _get(gunicorn_server, "/healthz", timeout=5)[0] == 200
        assert time.monotonic() - started < 2.0
    finally:
        for sock in stalled:
            sock.close()


def test_many_more_stalled_clients_than_threads_do_not_block_healthz(gunicorn_server):
    # Request heads are read by the worker's poller: a stalled head costs a socket, not a thread.
    stalled = _stalled_sockets(gunicorn_server, THREADS * 10)
    try:
        time.sleep(0.3)
        for _ in range(3):
            started = time.monotonic()
            assert _get(gunicorn_server, "/healthz", timeout=10)[0] == 200
            assert time.monotonic() - started < 2.0
        # The server drops the stalled connections itself after the read timeout.
        for sock in stalled:
            sock.settimeout(READ_TIMEOUT + 3)
            assert sock.recv(1024) == b""
    finally:
        for sock in stalled:
            sock.close()


def test_a_head_split_over_several_packets_is_served(gunicorn_server):
    sock = socket.create_connection(("127.0.0.1", gunicorn_server), timeout=5)
    try:
        for part in (b"GET /heal", b"thz HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"Connection: close\r\n\r\n"):
            sock.sendall(part)
            time.sleep(0.1)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert answer.endswith(b'{"status": "ok"}')
    finally:
        sock.close()


def test_kept_alive_connections_serve_several_requests(gunicorn_server):
    conn = http.client.HTTPConnection("127.0.0.1", gunicorn_server, timeout=5)
    try:
        for _ in range(3):
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            assert response.status == 200 and response.read() == b'{"status": "ok"}'
    finally:
        conn.close()


def test_a_body_shorter_than_its_content_length_is_answered_408(gunicorn_server):
    sock = socket.create_connection(("127.0.0.1", gunicorn_server), timeout=READ_TIMEOUT + 5)
    try:
        sock.sendall(
            b"POST /api/v1/context HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n" + b'{"message":'
        )
        started = time.monotonic()
        answer = sock.recv(4096)
        while not answer.endswith(b"}") and (chunk := sock.recv(4096)):  # head and body may arrive apart
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"code": "REQUEST_TIMEOUT"' in answer
        assert time.monotonic() - started < READ_TIMEOUT + 2.0
    finally:
        sock.close()


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_is_read_as_the_body(gunicorn_server, user, catalog):
    conn = http.client.HTTPConnection("127.0.0.1", gunicorn_server, timeout=10)
    body = json.dumps({"message": "qual o prazo de entrega?"}).encode()
    conn.request(
        "POST",
        "/api/v1/context",
        body=iter([body[:10], body[10:]]),
        headers={"Authorization": f"Token {user.auth_token.key}", "Content-Type": "application/json"},
        encode_chunked=True,
    )
    response = conn.getresponse()
    payload = json.loads(response.read())
    conn.close()
    assert response.status == 200, payload
    assert payload["full"] or payload["listed"]


def test_a_server_that_cannot_dechunk_answers_411():
    def app(environ, start_response):  # pragma: no cover - must not be reached
        raise AssertionError("the body would have been read as empty")

    captured = {}

    def start_response(status, headers):
        from wsgiref.util import is_hop_by_hop

        assert not any(is_hop_by_hop(name) for name, _ in headers)  # runserver (wsgiref) refuses them
        captured["status"] = status

    environ = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(b"5\r\nhello\r\n0\r\n\r\n")}
    body = b"".join(RequestBodyMiddleware(app, max_bytes=1000)(environ, start_response))
    assert captured["status"] == "411 Length Required"
    assert json.loads(body)["error"]["code"] == "LENGTH_REQUIRED"
