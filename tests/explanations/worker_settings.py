"""Settings of the Celery worker subprocess in test_real_worker.py: the test
settings, with the LLM endpoint taken from the environment (the test settings
pin the offline provider) and tasks consumed from Redis, never eager."""

from config.settings.test import *  # noqa: F403
from config.settings.test import env

LLM_PROVIDER = env("LLM_PROVIDER", default="offline")
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_MODEL = env("LLM_MODEL", default="scripted-model")
LLM_MAX_RETRIES = 0
CELERY_TASK_ALWAYS_EAGER = False
