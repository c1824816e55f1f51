"""LLM settings and providers, read from Django settings once.

``llm_settings()`` validates ``LLM_*`` on first use (and at startup, from
``apps.ready``) and raises ``ImproperlyConfigured`` on bad values. Changing a
setting in tests (``override_settings``/``settings`` fixture) clears the cache.
"""

from __future__ import annotations

import threading
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from llm import LLMConfigError, LLMProvider, LLMSettings, build_provider, llm_settings_from_mapping

LLM_SETTING_NAMES = (
    "LLM_PROVIDER",
    "LLM_BASE_URL",
    "LLM_API_KEY",
    "LLM_MODEL",
    "LLM_TIMEOUT",
    "LLM_MAX_RETRIES",
    "LLM_REPLAY_FIXTURE",
)

_providers: dict[LLMSettings, LLMProvider] = {}
_providers_lock = threading.Lock()


@lru_cache(maxsize=1)
def llm_settings() -> LLMSettings:
    values = {name: getattr(settings, name, "") for name in LLM_SETTING_NAMES}
    try:
        return llm_settings_from_mapping(values)
    except LLMConfigError as exc:
        raise ImproperlyConfigured(str(exc)) from None


def agent_llm_settings(agent) -> LLMSettings:
    """The global settings with the agent's admin overrides applied (validated)."""
    return llm_settings().with_overrides(provider=agent.provider, model=agent.model, options=agent.settings or {})


def provider_for(agent) -> LLMProvider:
    """The provider an agent talks to (its admin overrides applied)."""
    return provider_for_settings(agent_llm_settings(agent))


def provider_for_settings(config: LLMSettings) -> LLMProvider:
    """One provider instance per effective configuration (a replay script keeps its cursor)."""
    with _providers_lock:
        provider = _providers.get(config)
        if provider is None:
            provider = _providers[config] = build_provider(config)
        return provider


def curation_provider() -> LLMProvider | None:
    """The globally configured model for curation-time proposals (search terms, example and out-of-scope
    questions), or None for the offline provider: it cannot propose anything."""
    config = llm_settings()
    return None if config.provider == "offline" else provider_for_settings(config)


def clear_llm_caches() -> None:
    llm_settings.cache_clear()
    with _providers_lock:
        _providers.clear()


@receiver(setting_changed)
def _llm_setting_changed(*, setting, **kwargs):
    if setting in LLM_SETTING_NAMES:
        clear_llm_caches()
