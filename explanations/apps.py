from django.apps import AppConfig


class ExplanationsConfig(AppConfig):
    name = "explanations"
