"""A killed worker holds back only the task it was running (prefetch 1, acks_late).

With Celery's default prefetch (4 per process) a worker reserved three more
messages than it ran; killed, it took them along into the 600 s visibility
timeout. Here the whole worker (master and pool) is SIGKILLed mid-task and a
new worker must explain the queued results at once, well inside that timeout.
"""

import os
import signal
import threading
import time

import pytest
from django.conf import settings

from explanations.models import Result
from tests.support.llm_server import Behaviour

from .conftest import REJECTED_NARRATIVE, VERIFIED_NARRATIVE
from .test_real_worker import WAIT_SECONDS, WorkerProcess, group_members

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

QUEUED = 3


def test_celery_settings_reserve_one_message_and_ack_late():
    assert settings.CELERY_WORKER_PREFETCH_MULTIPLIER == 1
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert visibility > settings.CELERY_TASK_TIME_LIMIT > settings.CELERY_TASK_SOFT_TIME_LIMIT


def test_queued_tasks_of_a_killed_worker_run_on_the_next_worker_at_once(
    tmp_path, llm_server, real_broker, api_client, payroll_payload
):
    import redis

    redis.Redis.from_url(settings.TEST_REDIS_URL).flushdb()  # this checkout's own Redis db
    first_call = threading.Event()

    def hang(request):
        first_call.set()
        return Behaviour("reply", content=REJECTED_NARRATIVE, delay=40)

    llm_server.call(hang)
    for _ in range(QUEUED):
        llm_server.reply(VERIFIED_NARRATIVE)

    (tmp_path / "first").mkdir()
    first = WorkerProcess(tmp_path / "first", llm_server.url)
    second = None
    try:
        first.wait_ready()
        for n in range(QUEUED + 1):
            payload = {**payroll_payload, "result_id": f"kill-{n}"}
            assert api_client.post("/api/v1/results", payload, format="json").status_code == 201
        assert first_call.wait(WAIT_SECONDS), first.output()[-3000:]
        time.sleep(1.0)  # room for the worker to reserve more messages, if it would
        os.killpg(first.pgid, signal.SIGKILL)  # the whole worker, master included: no warm shutdown
        first.proc.wait(timeout=30)

        (tmp_path / "second").mkdir()
        second = WorkerProcess(tmp_path / "second", llm_server.url)
        second.wait_ready()
        started = time.monotonic()
        deadline = started + WAIT_SECONDS
        while time.monotonic() < deadline:
            done = Result.objects.filter(result_id__startswith="kill-", explanation_status="done").count()
            if done >= QUEUED:
                break
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        assert done == QUEUED, second.output()[-3000:]
        # The one that was running waits for the visibility timeout (or the sweep), the rest did not.
        assert elapsed < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] / 10
        print(f"queued tasks of a killed worker explained {elapsed:.1f} s after the next worker was ready")
    finally:
        leaked = []
        for process in (first, second):
            if process is not None:
                leaked += process.stop()
        assert not leaked, f"worker processes left running: {leaked}"
        assert not group_members(first.pgid)
