"""API throttling whose cost per request does not grow with the rate (issue 17).

DRF's ``UserRateThrottle`` keeps each user's request times of the last period as one
list in the cache and reads and rewrites all of it on every request: at the default
1,200/min that is up to 1,200 timestamps unpickled and pickled again per request, and
an integration whose one token carries many end users at 150 turns/s holds 9,000.
``UserWindowRateThrottle`` keeps two integer counters per user instead, the current
fixed window's and the previous one's, and estimates the requests of the last period
as the current count plus the previous count weighted by how much of the previous
window still lies within the period (the sliding-window counter). One Redis round trip
per request (INCR, EXPIRE and GET pipelined); a refused request is taken back out of
the count, as DRF did not record refused requests either. The estimate assumes the
previous window's requests were spread evenly, so a burst at its end may be refused
up to a window early or let through slightly late; the limit never admits double the
rate at a window's edge, as a plain fixed window would.
"""

from rest_framework.throttling import UserRateThrottle


def window_counts(cache, key: str, previous_key: str, timeout: int) -> tuple[int, int]:
    """Count one request in ``key``; return it with ``previous_key``'s count."""
    incr_window = getattr(cache, "incr_window", None)
    if incr_window is not None:
        return incr_window(key, previous_key, timeout)
    cache.add(key, 0, timeout)
    try:
        current = cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.set(key, 1, timeout)
        current = 1
    return current, int(cache.get(previous_key) or 0)


def window_uncount(cache, key: str) -> None:
    try:
        cache.decr(key)
    except ValueError:
        pass


class UserWindowRateThrottle(UserRateThrottle):
    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        window, offset = divmod(self.timer(), self.duration)
        window = int(window)
        key = f"{self.key}:w{window}"
        current, previous = window_counts(self.cache, key, f"{self.key}:w{window - 1}", 2 * self.duration)
        weight = 1 - offset / self.duration
        if previous * weight + current <= self.num_requests:
            return True
        window_uncount(self.cache, key)
        self._retry_after = self._seconds_until_allowed(current - 1, previous, offset)
        return False

    def _seconds_until_allowed(self, current: int, previous: int, offset: float) -> float:
        """When the estimate next leaves room for one request (``current`` without the refused one)."""
        limit, duration = self.num_requests, self.duration
        if limit <= 0:  # a rate of 0: closed; ask again after a whole period
            return float(duration)
        room = limit - 1 - current
        if room >= 0:  # within this window, once enough of the previous one has slid out
            return max(duration * (1 - room / previous) - offset, 0.0) if previous else 0.0
        # this window alone is over the limit: into the next, until enough of this one has slid out
        return (duration - offset) + duration * (1 - (limit - 1) / current)

    def wait(self) -> float:
        return getattr(self, "_retry_after", None) or 0.0
