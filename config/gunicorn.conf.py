"""gunicorn settings for production mode (scripts/run without DEBUG). See docs/operations.md.

Threads, not processes, wait on slow things: an agent turn spends seconds on LLM
calls, and a gthread worker holds one thread for it, not a whole process. Idle
keep-alive sockets wait in the worker's poller, and a stalled client is cut off
after GUNICORN_READ_TIMEOUT.

Sizing: requests in flight per host = WEB_CONCURRENCY × GUNICORN_THREADS (2 × 64).
A kept-alive client stays with the worker that accepted it, so one worker may get
most of them: each worker alone has threads for 50 turns waiting on a model (with
32, 50 clients on 2 s model calls saw p95 3.9 s: the unlucky worker queued them).
Threads may outnumber database
connections: each process shares a pool of at most DB_POOL_MAX_SIZE (8), and a turn
gives its connection back before it waits on the model (common/db_pool.py), so a
host holds at most WEB_CONCURRENCY × DB_POOL_MAX_SIZE connections (16).
"""

import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
worker_class = "config.gunicorn_worker.ReadTimeoutThreadWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "64"))
# gthread: the worker's heartbeat, not a request's duration (requests are bounded by
# LLM_TIMEOUT and the read timeout). Kept above a whole agent turn anyway.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "300"))
graceful_timeout = 30
keepalive = 5
# Connections a worker holds at once (idle keep-alive ones included); excess wait in the backlog.
worker_connections = int(os.environ.get("GUNICORN_WORKER_CONNECTIONS", "200"))
# Header limits: defaults, stated.
limit_request_line = 8190
limit_request_fields = 100
accesslog = None
errorlog = "-"


def post_worker_init(worker):
    """Before the worker takes requests: train the ontology's classifiers (fitted once per process
    from files in the repo, 2–5 s) and import every view (the URLconf pulls in the MCP SDK and
    the apps' API modules: the first requests of a worker waited on those imports, seconds on a
    loaded machine, and blocked each other on the import lock)."""
    from django.urls import get_resolver

    from ontology.routing.warmup import warm_ontology_models

    get_resolver().url_patterns  # noqa: B018 - the import is the point
    warm_ontology_models()
