from django.apps import AppConfig


class LlmConfig(AppConfig):
    name = "llm"
    verbose_name = "Language models"

    def ready(self):
        from llm import runtime

        # Fail fast: a bad LLM_* setting stops the process at startup, not mid-turn.
        runtime.llm_settings()
