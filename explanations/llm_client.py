"""The one call the explanation step makes to a language model.

Interface: `narrate(prompt, *, timeout) -> str`, raising `ProviderUnavailable`
for anything that is the provider's fault (refused connection, timeout, HTTP
error, malformed body, bad configuration). An empty string is a valid answer
(the caller records it as `no_response`).

It goes through the shared providers of the `llm` app with the global
`LLM_*` settings (no agent), the timeout replaced by the explanation's own
and temperature 0: "openai" (any OpenAI-compatible endpoint) and "replay"
(scripted demos). The "offline" provider answers agent turns, not
narratives, so offline the narrative is written here from the prompt's own
list of citable numbers: the embedded default works end to end and passes
the check.
"""

from __future__ import annotations

from dataclasses import replace

from django.core.exceptions import ImproperlyConfigured

from llm import ChatMessage, LLMRequest, ProviderUnavailable
from llm.runtime import llm_settings, provider_for_settings
from explanations.prompts import listed_citable_texts

__all__ = ["ProviderUnavailable", "model_name", "narrate"]

OFFLINE = "offline"
# The shared provider reports an empty reply as unavailable; for a narrative
# it is an answer, recorded as no_response.
_EMPTY_REPLY_REASONS = ("empty_reply", "empty_choices")


def model_name() -> str:
    """The model a call would use, for the Explanation row."""
    try:
        config = llm_settings()
    except ImproperlyConfigured:
        return ""
    return OFFLINE if config.provider == OFFLINE else config.model


def narrate(prompt: str, *, timeout: float) -> str:
    """The model's reply to `prompt` (temperature 0), as received."""
    try:
        config = llm_settings()
    except ImproperlyConfigured:
        raise ProviderUnavailable("not_configured") from None
    if config.provider == OFFLINE:
        return _offline_narrative(prompt)
    provider = provider_for_settings(replace(config, timeout=timeout))
    request = LLMRequest(messages=(ChatMessage("user", prompt),), options={"temperature": 0})
    try:
        return provider.complete(request).text
    except ProviderUnavailable as exc:
        if exc.reason in _EMPTY_REPLY_REASONS:
            return ""
        raise


def _offline_narrative(prompt: str) -> str:
    texts = listed_citable_texts(prompt)
    if not texts:
        return "Explicação gerada sem modelo de linguagem (modo offline)."
    return "Explicação gerada sem modelo de linguagem (modo offline). Valores do resultado: " + "; ".join(texts) + "."
