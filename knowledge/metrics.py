"""Prometheus metrics of the knowledge router (served by /metrics with the rest; multiprocess
as described in ``explanations.metrics``: counters and histograms only).

What an operator watches on a shared index: how each process got its index (mapping a segment
another process wrote, writing it, a delta, or a copy in its own memory), how long that took, when
the shared directory could not be used, whether catalog changes queued the worker's build, and what
a route costs with and without the route cache.
"""

from prometheus_client import Counter, Histogram

# How a process made an index ready (``knowledge.index_store``).
HOW_MAPPED = "mapped"  # opened a segment another process (or the Celery task) had written
HOW_WRITTEN = "written"  # wrote the segment itself, under its lock, then mapped it
HOW_MEMORY = "memory"  # no index directory, or an unusable one: built in this process's memory
HOW_DELTA = "delta"  # merged an edit into the current base (compaction follows)

INDEX_READY = Counter(
    "contexto_router_index_ready",
    "Router indexes a process made ready, by how: mapped (a segment another process wrote), written "
    "(this process wrote the segment), memory (built in the process: no index directory, or an unusable "
    "one), delta (an edit merged into the current base).",
    ["how"],
)
INDEX_READY_SECONDS = Histogram(
    "contexto_router_index_ready_seconds",
    "Time to make a router index ready, entry vectors included, by how.",
    ["how"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
SHARED_UNAVAILABLE = Counter(
    "contexto_router_shared_unavailable",
    "Times a process could not use the shared index directory and kept its own copy in memory, by part: "
    "segment (BM25 and the per-entry tables) or vectors (the dense signal's entry vectors).",
    ["part"],
)
# What a committed catalog change did about the worker's build (``index_store.router_index_build_soon``).
BUILD_QUEUED = "queued"  # knowledge.router_index_build was queued
BUILD_ALREADY_QUEUED = "already_queued"  # one was queued and has not started: it reads this change too
BUILD_NOT_QUEUED = "failed"  # the broker or the cache could not be reached: the processes compact themselves
INDEX_BUILD_QUEUE = Counter(
    "contexto_router_index_build_queue",
    "Catalog changes and the router index build task, by outcome: queued, already_queued (one was waiting "
    "to start), failed (broker or cache unreachable: the web processes compact after their wait).",
    ["outcome"],
)
ROUTES = Histogram(
    "contexto_router_route_seconds",
    "route_context duration (index check, routing and shaping, route cache, session bookkeeping), by "
    "whether the route cache answered.",
    ["cached"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)
