"""The one call the explanation step makes to a language model.

Interface: `narrate(prompt, *, timeout) -> str`, raising `ProviderUnavailable`
for anything that is the provider's fault (refused connection, timeout, HTTP
error, malformed body). An empty string is a valid answer (the caller maps
it to `no_response`).

This is a deliberately small stand-in until the shared providers of
conversations/llm/ land (issue 4); swapping means re-implementing `narrate`
on top of them. Providers, from settings.LLM_PROVIDER:
- "openai": any OpenAI-compatible /chat/completions endpoint (OpenAI, vLLM,
  Ollama, llama.cpp) at LLM_BASE_URL, with LLM_API_KEY and LLM_MODEL;
- "offline": no model; writes a narrative from the prompt's own list of
  citable numbers, so the embedded default works end to end.
"""

from __future__ import annotations

import json
import logging
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from django.conf import settings

from explanations.prompts import listed_citable_texts

logger = logging.getLogger(__name__)

OFFLINE_MODEL = "offline"


class ProviderUnavailable(Exception):
    """The provider did not give an answer (down, slow, HTTP error, garbage)."""

    def __init__(self, reason: str):
        self.reason = reason  # a short code, safe to log: "timeout", "http_500", ...
        super().__init__(reason)


@dataclass(frozen=True)
class _Config:
    provider: str
    base_url: str
    api_key: str
    model: str
    max_retries: int


def _config() -> _Config:
    # Read per call (cheap) so tests and operators can change settings live.
    provider = getattr(settings, "LLM_PROVIDER", "offline")
    base_url = getattr(settings, "LLM_BASE_URL", "").rstrip("/")
    if provider != OFFLINE_MODEL and not base_url:
        raise ProviderUnavailable("not_configured")
    return _Config(
        provider=provider,
        base_url=base_url,
        api_key=getattr(settings, "LLM_API_KEY", ""),
        model=getattr(settings, "LLM_MODEL", ""),
        max_retries=max(0, int(getattr(settings, "LLM_MAX_RETRIES", 1))),
    )


def model_name() -> str:
    """The model a call would use, for the Explanation row."""
    if getattr(settings, "LLM_PROVIDER", "offline") == OFFLINE_MODEL:
        return OFFLINE_MODEL
    return getattr(settings, "LLM_MODEL", "")


def narrate(prompt: str, *, timeout: float) -> str:
    """The model's reply to `prompt` (temperature 0), as received."""
    config = _config()
    if config.provider == OFFLINE_MODEL:
        return _offline_narrative(prompt)
    attempts = config.max_retries + 1
    last: ProviderUnavailable | None = None
    for attempt in range(attempts):
        try:
            return _chat_completion(config, prompt, timeout=timeout)
        except ProviderUnavailable as exc:
            last = exc
            if not _retriable(exc) or attempt == attempts - 1:
                break
            time.sleep(min(0.5 * 2**attempt, 2.0))
    assert last is not None
    raise last


def _retriable(exc: ProviderUnavailable) -> bool:
    return exc.reason in ("timeout", "connection", "http_429") or exc.reason.startswith("http_5")


def _chat_completion(config: _Config, prompt: str, *, timeout: float) -> str:
    body = json.dumps(
        {
            "model": config.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
    ).encode()
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    request = urllib.request.Request(f"{config.base_url}/chat/completions", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        raise ProviderUnavailable(f"http_{exc.code}") from None
    except TimeoutError:
        raise ProviderUnavailable("timeout") from None
    except urllib.error.URLError as exc:
        reason = "timeout" if isinstance(exc.reason, (TimeoutError, socket.timeout)) else "connection"
        raise ProviderUnavailable(reason) from None
    except (ConnectionError, OSError):
        raise ProviderUnavailable("connection") from None
    try:
        content = json.loads(raw)["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ProviderUnavailable("malformed_response") from None
    return content or ""


def _offline_narrative(prompt: str) -> str:
    texts = listed_citable_texts(prompt)
    if not texts:
        return "Explicação gerada sem modelo de linguagem (modo offline)."
    return "Explicação gerada sem modelo de linguagem (modo offline). Valores do resultado: " + "; ".join(texts) + "."
