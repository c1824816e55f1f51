"""LLM settings: parsed and validated once, failing fast on bad values."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from .base import LLMConfigError

PROVIDERS = ("offline", "openai", "replay")

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 1
MAX_RETRIES_CEILING = 10  # beyond this a "retry" is an outage, not a blip


@dataclass(frozen=True)
class LLMSettings:
    provider: str = "offline"
    base_url: str = ""
    api_key: str = ""
    model: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    max_retries: int = DEFAULT_MAX_RETRIES
    replay_fixture: str = ""

    def with_overrides(
        self, *, provider: str = "", model: str = "", options: Mapping[str, Any] | None = None
    ) -> "LLMSettings":
        """Per-agent overrides (admin): provider, model and a few connection knobs."""
        options = dict(options or {})
        changes: dict[str, Any] = {}
        if provider:
            changes["provider"] = provider
        if model:
            changes["model"] = model
        for key in ("base_url", "timeout", "max_retries", "replay_fixture"):
            if key in options and options[key] not in (None, ""):
                changes[key] = options[key]
        if not changes:
            return self
        merged = replace(self, **changes)
        return validate_llm_settings(merged)


def _as_float(name: str, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LLMConfigError(f"{name} must be a number of seconds, got {value!r}") from None
    if not number > 0:
        raise LLMConfigError(f"{name} must be > 0, got {value!r}")
    return number


def _as_int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise LLMConfigError(f"{name} must be an integer, got {value!r}")
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise LLMConfigError(f"{name} must be an integer, got {value!r}") from None
    if not 0 <= number <= MAX_RETRIES_CEILING:
        raise LLMConfigError(f"{name} must be between 0 and {MAX_RETRIES_CEILING}, got {value!r}")
    return number


def validate_llm_settings(settings: LLMSettings) -> LLMSettings:
    provider = (settings.provider or "").strip().lower()
    if provider not in PROVIDERS:
        raise LLMConfigError(f"LLM_PROVIDER must be one of {', '.join(PROVIDERS)}, got {settings.provider!r}")
    timeout = _as_float("LLM_TIMEOUT", settings.timeout)
    max_retries = _as_int("LLM_MAX_RETRIES", settings.max_retries)
    base_url = (settings.base_url or "").strip()
    model = (settings.model or "").strip()
    if base_url:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LLMConfigError(f"LLM_BASE_URL must be an http(s) URL, got {base_url!r}")
    if provider == "openai":
        if not base_url:
            raise LLMConfigError("LLM_PROVIDER=openai needs LLM_BASE_URL (e.g. https://api.openai.com/v1)")
        if not model:
            raise LLMConfigError("LLM_PROVIDER=openai needs LLM_MODEL")
    fixture = (settings.replay_fixture or "").strip()
    if provider == "replay":
        if not fixture:
            raise LLMConfigError("LLM_PROVIDER=replay needs LLM_REPLAY_FIXTURE (a JSON file)")
        if not Path(fixture).is_file():
            raise LLMConfigError(f"LLM_REPLAY_FIXTURE does not exist: {fixture}")
    return replace(
        settings,
        provider=provider,
        base_url=base_url,
        model=model,
        timeout=timeout,
        max_retries=max_retries,
        replay_fixture=fixture,
    )


def llm_settings_from_mapping(values: Mapping[str, Any]) -> LLMSettings:
    """Build settings from ``LLM_*`` keys (Django settings or environment).

    ``LLM_PROVIDER`` empty or absent means: ``openai`` when ``LLM_BASE_URL``
    is set, otherwise the embedded ``offline`` provider.
    """

    base_url = str(values.get("LLM_BASE_URL") or "").strip()
    provider = str(values.get("LLM_PROVIDER") or "").strip().lower()
    if not provider:
        provider = "openai" if base_url else "offline"
    timeout = values.get("LLM_TIMEOUT")
    max_retries = values.get("LLM_MAX_RETRIES")
    return validate_llm_settings(
        LLMSettings(
            provider=provider,
            base_url=base_url,
            api_key=str(values.get("LLM_API_KEY") or ""),
            model=str(values.get("LLM_MODEL") or ""),
            timeout=DEFAULT_TIMEOUT_SECONDS if timeout in (None, "") else timeout,
            max_retries=DEFAULT_MAX_RETRIES if max_retries in (None, "") else max_retries,
            replay_fixture=str(values.get("LLM_REPLAY_FIXTURE") or ""),
        )
    )
