"""gunicorn settings for production mode (scripts/run without DEBUG). See docs/operations.md.

Threads, not processes, wait on slow things: an agent turn spends seconds on LLM
calls, and a gthread worker holds one thread (and at most one database
connection) for it, not a whole process. Idle keep-alive sockets wait in the
worker's poller, and a stalled client is cut off after GUNICORN_READ_TIMEOUT.
Database connections are bounded by workers x threads (+ the readiness probe's pool).
"""

import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
worker_class = "config.gunicorn_worker.ReadTimeoutThreadWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
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
    """Train the ontology's classifiers before the worker takes requests: they are fitted once per
    process from files in the repo (2–5 s), and the first ontology route must not wait on that."""
    from ontology.routing.warmup import warm_ontology_models

    warm_ontology_models()
