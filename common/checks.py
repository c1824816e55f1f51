"""Deployment checks of our own, run by `manage.py check --deploy`."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def metrics_token_check(app_configs, **kwargs):
    if getattr(settings, "METRICS_TOKEN", ""):
        return []
    return [
        Warning(
            "METRICS_TOKEN is empty: /metrics is open to anyone who can reach the process.",
            hint="Set METRICS_TOKEN in production; the scraper sends it as a bearer token.",
            id="contexto.W001",
        )
    ]
