import os

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("contexto")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@after_setup_logger.connect
@after_setup_task_logger.connect
def _redact_worker_logs(logger=None, **kwargs):
    # The worker replaces the root handlers with its own: put the redaction back on them.
    from common.log_redaction import install_on_handlers

    install_on_handlers(logger)
