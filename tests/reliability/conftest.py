"""Fixtures for fault tests: closed and hung loopback ports, never the shared services."""

import socket
import threading

import pytest

from common.cache import reset_circuits


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def hung_port():
    """A port that accepts TCP connections and never answers: a hung Redis."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture(autouse=True)
def _fresh_circuits():
    reset_circuits()
    yield
    reset_circuits()


def redis_down_settings(settings, url: str) -> None:
    """Cache and broker both at ``url`` (the one documented REDIS_URL pointing at a dead Redis)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "common.cache.FailOpenRedisCache",
            "LOCATION": url,
            "OPTIONS": {"socket_connect_timeout": 0.3, "socket_timeout": 0.3, "retry_seconds": 30},
        }
    }
    settings.CELERY_BROKER_URL = url
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.READYZ_TIMEOUT_SECONDS = 1.0
