"""The Redis cache reuses one client per connection pool (Django builds one per call)."""

import threading

from django.core.cache import cache


def test_cache_calls_share_one_redis_client():
    cache.set("reuse-probe", 1)
    assert cache.get("reuse-probe") == 1
    assert cache._cache.get_client() is cache._cache.get_client(write=True)


def test_the_shared_client_serves_concurrent_threads():
    errors = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                cache.set(f"reuse-thread-{n}", i)
                assert cache.get(f"reuse-thread-{n}") == i
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
