"""The API throttle: a sliding-window estimate in two counters per user, one round trip."""

from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.throttling import UserRateThrottle

from common.throttling import UserWindowRateThrottle

pytestmark = pytest.mark.django_db


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


def throttle(clock: Clock, rate: str = "10/min", backend=None) -> UserWindowRateThrottle:
    t = UserWindowRateThrottle.__new__(UserWindowRateThrottle)
    t.rate = rate
    t.num_requests, t.duration = t.parse_rate(rate)
    t.timer = clock
    t.cache = backend or cache
    return t


def request(pk: int = 4242):
    return SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=pk))


@pytest.fixture(autouse=True)
def clean():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("backend", [None, LocMemCache("throttle-test", {})], ids=["redis", "locmem"])
def test_the_limit_holds_within_a_window_and_a_refusal_is_not_counted(backend):
    clock = Clock(6000.0)  # the start of a window (6000 = 100 × 60)
    allowed = [throttle(clock, backend=backend).allow_request(request(), None) for _ in range(12)]
    assert allowed == [True] * 10 + [False, False]
    refused = throttle(clock, backend=backend)
    assert not refused.allow_request(request(), None)
    # this window is full: into the next, until a tenth of it has slid out (10 × 54/60 + 1 ≤ 10)
    assert refused.wait() == pytest.approx(66)
    clock.now += 61  # the next window: the previous one (10, refusals not counted) weighs 59/60
    assert not throttle(clock, backend=backend).allow_request(request(), None)
    clock.now += 10  # 49/60 of 10 = 8.2: one more request fits (9.2 ≤ 10), then two more
    assert [throttle(clock, backend=backend).allow_request(request(), None) for _ in range(3)] == [True, False, False]


def test_a_burst_at_a_window_edge_is_not_let_through_twice():
    clock = Clock(6059.0)  # the last second of a window
    assert all(throttle(clock).allow_request(request(), None) for _ in range(10))
    clock.now = 6061.0  # one second into the next: a fixed window would allow 10 more
    assert not throttle(clock).allow_request(request(), None)


def test_users_are_counted_apart_and_the_counters_are_plain_integers():
    clock = Clock(6000.0)
    t = throttle(clock, rate="1/min")
    assert t.allow_request(request(1), None)
    assert throttle(clock, rate="1/min").allow_request(request(2), None)
    assert not throttle(clock, rate="1/min").allow_request(request(1), None)
    assert cache.get(f"{t.key}:w100") == 1  # an integer, whatever the rate: the cost does not grow


def test_one_redis_round_trip_per_allowed_request(monkeypatch):
    calls = []
    client = cache._cache.get_client(write=True)
    original = type(client).pipeline

    def pipeline(self, *args, **kwargs):
        calls.append("pipeline")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(client), "pipeline", pipeline)
    monkeypatch.setattr(type(client), "execute_command", lambda *a, **k: calls.append(a[1]) or 0, raising=True)
    # execute_command is patched out: only a pipeline may reach Redis (pipelines send through their own path)
    clock = Clock(6000.0)
    assert throttle(clock).allow_request(request(), None)
    assert calls == ["pipeline"]


def test_the_api_answers_429_with_retry_after(api_client, monkeypatch):
    monkeypatch.setattr(UserRateThrottle, "THROTTLE_RATES", {"user": "3/min"})
    statuses = [api_client.get("/api/v1/ontology/skills") for _ in range(4)]
    assert [r.status_code for r in statuses] == [200, 200, 200, 429]
    assert int(statuses[-1]["Retry-After"]) >= 1


def test_a_zero_rate_refuses_every_request_with_a_retry_after_not_a_500():
    # API_THROTTLE_RATE=0/min is an operator closing the API to a user: 429, never a ZeroDivisionError.
    clock = Clock(6030.0)
    t = throttle(clock, rate="0/min")
    assert not t.allow_request(request(), None)
    assert t.wait() == 60.0
