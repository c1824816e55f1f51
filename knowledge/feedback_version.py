"""The fetch-feedback version: a counter in the shared cache every router compares on each route.

Its own module so the models' queryset (knowledge.models) can bump it without importing
knowledge.feedback, which imports the models.
"""

from django.core.cache import cache

FEEDBACK_VERSION_KEY = "knowledge:feedback:version"


def feedback_version_bump() -> None:
    """Every process refreshes its feedback snapshot on its next route (run on commit)."""
    try:
        cache.incr(FEEDBACK_VERSION_KEY)
    except ValueError:
        cache.set(FEEDBACK_VERSION_KEY, 1, timeout=None)
