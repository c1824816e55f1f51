"""Prometheus metrics of the explanation step, and the /metrics view.

Multiprocess: gunicorn workers and Celery worker processes each count in
their own process. With PROMETHEUS_MULTIPROC_DIR set (before the process
imports prometheus_client: set it in the environment of gunicorn and celery,
and empty the folder at deploy) every process writes its samples there and
/metrics aggregates them with MultiProcessCollector. Without it (embedded
mode, a single process) the default registry is served.
Only counters and histograms are used, so no gunicorn child_exit hook is
needed (that is for live gauges).
"""

import hmac
import os

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

EXPLANATIONS = Counter(
    "contexto_explanations",
    "Explanation steps by outcome (verified, rejected, no_response, provider_unavailable, error).",
    ["outcome"],
)
EXPLANATION_DURATION = Histogram(
    "contexto_explanation_duration_seconds",
    "Duration of the explanation step (model call and check), successful or not.",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90),
)


def _registry():
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY


def metrics_view(request):
    """Prometheus text exposition. Optional METRICS_TOKEN: bearer token required."""
    token = getattr(settings, "METRICS_TOKEN", "")
    if token:
        supplied = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(supplied, token):
            return HttpResponse("unauthorized\n", status=401, content_type="text/plain")
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
