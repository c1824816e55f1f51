from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"

    def ready(self):
        from conversations import llm_settings

        # Fail fast: a bad LLM_* setting stops the process at startup, not mid-turn.
        llm_settings.llm_settings()
