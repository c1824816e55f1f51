"""One Redis outage is not a full outage: reads, turns and throttling go on; /readyz says what is down."""

import logging
import time

import pytest
from django.core.cache import cache
from rest_framework.throttling import UserRateThrottle

from conversations.agents_seed import agents_seed_ensure
from tests.reliability.conftest import closed_port, redis_down_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def redis_down(settings):
    redis_down_settings(settings, f"redis://127.0.0.1:{closed_port()}/0")


def test_authenticated_reads_and_turns_answer_while_redis_is_down(redis_down, api_client, catalog, caplog):
    agents_seed_ensure()
    caplog.set_level(logging.WARNING, logger="common.cache")
    assert api_client.get("/api/v1/packages").status_code == 200
    response = api_client.post("/api/v1/context", {"message": "preço do orçamento"}, format="json")
    assert response.status_code == 200, response.content
    session = api_client.post("/api/v1/sessions", {}, format="json")
    assert session.status_code == 201, session.content
    turn = api_client.post(
        f"/api/v1/sessions/{session.json()['id']}/messages", {"message": "qual o prazo de entrega?"}, format="json"
    )
    assert turn.status_code == 201, turn.content
    assert turn.json()["reply"]
    # One line when the circuit opens, not one per request.
    opened = [r for r in caplog.records if r.getMessage().startswith("cache.redis_unavailable")]
    assert len(opened) == 1


def test_throttling_still_limits_while_redis_is_down(redis_down, api_client, monkeypatch):
    # DRF reads the rates into the class once; set them where the throttle looks.
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "5/min"})
    statuses = [api_client.get("/api/v1/ontology/skills").status_code for _ in range(7)]
    assert statuses[:5] == [200] * 5
    assert statuses[5:] == [429, 429]


def test_cache_goes_back_to_redis_after_the_retry_window(settings, caplog):
    caplog.set_level(logging.WARNING, logger="common.cache")
    settings.CACHES = {
        "default": {
            "BACKEND": "common.cache.FailOpenRedisCache",
            "LOCATION": settings.TEST_REDIS_URL,
            "KEY_PREFIX": "reliab-circuit",
            "OPTIONS": {"retry_seconds": 0.2},
        }
    }
    cache.set("k", "redis")
    cache._open(ConnectionError("simulated"))  # as a failed call would
    assert cache.redis_available is False
    cache.set("k", "local")  # served by this process's memory, Redis untouched
    assert cache.get("k") == "local"
    time.sleep(0.25)
    assert cache.get("k") == "redis"  # back on Redis
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "cache.redis_unavailable error=ConnectionError fallback=local retry_s=0.2",
        "cache.redis_recovered",
    ]
    cache.delete("k")


def test_readyz_names_cache_and_broker_separately_while_redis_is_down(redis_down, client):
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"] == {"database": "ok", "cache": "unavailable", "broker": "unavailable"}
    assert body["degraded"] == ["cache", "broker"]


def test_readyz_is_bounded_when_redis_hangs(settings, client, hung_port):
    redis_down_settings(settings, f"redis://127.0.0.1:{hung_port}/0")
    started = time.monotonic()
    response = client.get("/readyz")
    elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert response.json()["checks"]["cache"] in ("unavailable", "timeout")
    assert response.json()["checks"]["broker"] in ("unavailable", "timeout")
    assert elapsed < 2.5, elapsed


def test_a_hung_redis_costs_one_timeout_per_window_not_one_per_request(settings, api_client, hung_port):
    redis_down_settings(settings, f"redis://127.0.0.1:{hung_port}/0")
    started = time.monotonic()
    for _ in range(10):
        assert api_client.get("/api/v1/ontology/skills").status_code == 200
    assert time.monotonic() - started < 3.0
