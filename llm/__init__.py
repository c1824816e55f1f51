"""LLM providers behind one interface (see ``base.LLMProvider``)."""

from .base import (
    CatalogItem,
    ChatMessage,
    KnowledgeItem,
    LLMConfigError,
    LLMProvider,
    LLMRequest,
    LLMResult,
    ProviderUnavailable,
)
from .config import PROVIDERS, LLMSettings, llm_settings_from_mapping, validate_llm_settings
from .offline import OfflineProvider
from .openai import OpenAICompatibleProvider
from .replay import ReplayProvider


def build_provider(settings: LLMSettings) -> LLMProvider:
    if settings.provider == "openai":
        return OpenAICompatibleProvider(settings)
    if settings.provider == "replay":
        return ReplayProvider.from_fixture(settings.replay_fixture)
    return OfflineProvider()


__all__ = [
    "PROVIDERS",
    "CatalogItem",
    "ChatMessage",
    "KnowledgeItem",
    "LLMConfigError",
    "LLMProvider",
    "LLMRequest",
    "LLMResult",
    "LLMSettings",
    "OfflineProvider",
    "OpenAICompatibleProvider",
    "ProviderUnavailable",
    "ReplayProvider",
    "build_provider",
    "llm_settings_from_mapping",
    "validate_llm_settings",
]
