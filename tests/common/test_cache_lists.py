"""Bounded lists in the cache (a session's remembered routes): concurrent appends are all kept."""

import threading
import uuid

import pytest
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache

from common.cache import list_append, list_items


@pytest.fixture(params=["redis", "local memory"])
def any_cache(request):
    if request.param == "redis":
        return cache
    return LocMemCache("lists-test", {})


def _append_concurrently(target, key: str, threads: int = 4, each: int = 25) -> None:
    start = threading.Barrier(threads)

    def work(n: int) -> None:
        start.wait()
        for i in range(each):
            list_append(target, key, f"{n}-{i}", keep=1000, timeout=60)

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def test_concurrent_appends_are_all_kept(any_cache):
    key = f"lists-{uuid.uuid4().hex}"
    _append_concurrently(any_cache, key)
    items = list_items(any_cache, key)
    assert sorted(items) == sorted(f"{n}-{i}" for n in range(4) for i in range(25))
    for n in range(4):  # each writer's appends in its order
        assert [x for x in items if x.startswith(f"{n}-")] == [f"{n}-{i}" for i in range(25)]


def test_a_list_keeps_its_last_items_and_expires(any_cache):
    key = f"lists-{uuid.uuid4().hex}"
    for i in range(7):
        list_append(any_cache, key, str(i), keep=3, timeout=30)
    assert list_items(any_cache, key) == ["4", "5", "6"]
    assert list_items(any_cache, f"lists-{uuid.uuid4().hex}") == []
    if any_cache is cache:
        raw = cache._cache.get_client()
        assert 0 < raw.ttl(cache.make_and_validate_key(key)) <= 30


def test_a_list_append_is_one_redis_round_trip(monkeypatch):
    from redis.connection import Connection

    sent = []
    real = Connection.send_packed_command
    monkeypatch.setattr(Connection, "send_packed_command", lambda self, *a, **k: sent.append(1) or real(self, *a, **k))
    list_append(cache, f"lists-{uuid.uuid4().hex}", "x", keep=5, timeout=30)
    assert len(sent) == 1


def test_with_redis_unreachable_the_list_lives_in_local_memory(monkeypatch):
    from common import cache as cache_module

    key = f"lists-{uuid.uuid4().hex}"
    location = cache._location
    monkeypatch.setitem(cache_module._open_until, location, float("inf"))  # the circuit is open
    try:
        list_append(cache, key, "a", keep=5, timeout=30)
        list_append(cache, key, "b", keep=5, timeout=30)
        assert list_items(cache, key) == ["a", "b"]
        assert cache_module._fallbacks[location].get(key) == ["a", "b"]
    finally:
        cache_module._fallbacks[location].delete(key)


def test_another_backend_keeps_the_list_rather_than_failing_the_request(tmp_path):
    from django.core.cache.backends.filebased import FileBasedCache

    other = FileBasedCache(str(tmp_path), {})
    for i in range(7):
        list_append(other, "routes", f"r{i}", keep=5, timeout=60)
    assert list_items(other, "routes") == ["r2", "r3", "r4", "r5", "r6"]
