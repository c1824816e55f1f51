from django.apps import AppConfig


class CommonConfig(AppConfig):
    name = "common"

    def ready(self):
        from common import checks  # noqa: F401  (registers the deploy checks)
