"""The explanation task through a real Celery worker process against Redis
(TEST_REDIS_URL), the test database and the scripted LLM server.

transactional_db: the worker is another process and must see committed rows.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django_celery_results.models import TaskResult

from explanations.models import Explanation, Result
from explanations.tasks import explain_result
from tests.support.llm_server import Behaviour

from .conftest import REJECTED_NARRATIVE, VERIFIED_NARRATIVE

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Two shared cores under load: a cold worker (Django, Celery, a fork) can take
# a while to start, and a warm shutdown waits for the task in progress.
READY_SECONDS = 120
WAIT_SECONDS = 90
STOP_SECONDS = 30
# If pytest itself dies (CI timeout, SIGKILL), the kernel sends SIGTERM to the
# worker so it cannot outlive the run (it sits in its own session, so the
# terminal's signals never reach it).
_PARENT_DEATH = ["setpriv", "--pdeathsig", "TERM", "--"] if shutil.which("setpriv") else []


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _live_processes() -> list[tuple[int, int, int]]:
    """(pid, ppid, process group) of every process that is not a zombie, from
    /proc (no dependency on CONFIG_PROC_CHILDREN or psutil)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it exited while we looked
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the name may hold spaces
        state, ppid, pgrp = fields[0], int(fields[1]), int(fields[2])
        if state not in ("Z", "X"):
            found.append((int(entry.name), ppid, pgrp))
    return found


def group_members(pgid: int) -> list[int]:
    return [pid for pid, _, pgrp in _live_processes() if pgrp == pgid]


class WorkerProcess:
    """A real `celery worker` (prefork, one child) in its own process group,
    stopped by that group's id: never by name, never anyone else's."""

    def __init__(self, tmp_path: Path, llm_url: str):
        self.log = tmp_path / "worker.log"
        self.metrics_dir = tmp_path / "prometheus"
        self.metrics_dir.mkdir()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.explanations.worker_settings",
            "TEST_DATABASE_URL": _database_url(),
            "TEST_REDIS_URL": settings.TEST_REDIS_URL,
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": llm_url,
            "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir),
        }
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    *_PARENT_DEATH,
                    sys.executable, "-m", "celery", "-A", "config", "worker",
                    "--pool=prefork", "--concurrency=1", "--loglevel=INFO",
                    "--without-gossip", "--without-mingle", "--without-heartbeat",
                    "-n", f"issue6-test-{uuid.uuid4().hex[:8]}@%h",
                ],
                cwd=settings.BASE_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped by id below
            )  # fmt: skip
        self.pgid = self.proc.pid  # a new session leader's group id is its pid

    def wait_ready(self):
        self._wait_for(lambda: "ready." in self.output(), "worker ready", READY_SECONDS)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def pool_children(self) -> list[int]:
        return [pid for pid, ppid, _ in _live_processes() if ppid == self.proc.pid]

    def _wait_for(self, condition, what, seconds=WAIT_SECONDS):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.output()[-3000:]}")
            time.sleep(0.2)
        raise AssertionError(f"timed out after {seconds} s waiting for {what}:\n{self.output()[-3000:]}")

    def stop(self) -> list[int]:
        """Warm shutdown of the master (it stops its own pool), then SIGKILL for
        whatever is left in the group. Returns the pids still alive (none)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signal.SIGKILL)  # a hung master, or an orphaned pool child
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=STOP_SECONDS)
        deadline = time.monotonic() + 10
        while (left := group_members(self.pgid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left


@pytest.fixture
def worker(tmp_path, llm_server, real_broker):
    redis.Redis.from_url(settings.TEST_REDIS_URL).flushdb()  # this checkout's own Redis db
    process = WorkerProcess(tmp_path, llm_server.url)
    try:
        process.wait_ready()  # inside the try: a worker that never got ready is stopped too
        yield process
    finally:
        leaked = process.stop()
    assert process.proc.returncode is not None
    assert not leaked, f"worker processes left running: {leaked}"


def wait_until(condition, what, worker):
    worker._wait_for(condition, what)


def explanation_done(result_id):
    return Result.objects.filter(result_id=result_id, explanation_status="done").exists()


def test_real_worker_explains_a_posted_result(worker, llm_server, api_client, payroll_payload, client, monkeypatch):
    llm_server.reply(VERIFIED_NARRATIVE)
    assert api_client.post("/api/v1/results", payroll_payload, format="json").status_code == 201
    wait_until(lambda: explanation_done("sim-2026-03-0001"), "the explanation", worker)

    body = api_client.get("/api/v1/results/sim-2026-03-0001/explanation").json()
    assert (body["outcome"], body["narrative"]) == ("verified", VERIFIED_NARRATIVE)
    assert len(llm_server.requests) == 1

    # Operators see the task state in the admin (django-celery-results).
    wait_until(lambda: TaskResult.objects.filter(status="SUCCESS").exists(), "the task state", worker)
    state = TaskResult.objects.get(task_name="explanations.explain_result")
    assert state.status == "SUCCESS" and '"verified"' in state.result
    assert Explanation.objects.get().task_id == state.task_id

    # The worker's logs carry ids and the outcome, never content.
    log = worker.output()
    assert "explanation.finish result_id=sim-2026-03-0001" in log and "outcome=verified" in log
    for content in (VERIFIED_NARRATIVE, "R$ 1.234.567,89", "2,45%", "Regras obrigatórias"):
        assert content not in log

    # The worker process's metrics, served by this (web) process from the shared folder.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(worker.metrics_dir))
    metrics = client.get("/metrics").content.decode()
    assert 'contexto_explanations_total{outcome="verified"} 1.0' in metrics
    assert "contexto_explanation_duration_seconds_count 1.0" in metrics


def test_worker_killed_mid_call_is_redelivered_and_explains_once(worker, llm_server, api_client, payroll_payload):
    # First delivery hangs in the model call and its pool process is killed;
    # acks_late + reject_on_worker_lost put the message back.
    first_call = threading.Event()

    def hang(request):
        first_call.set()
        return Behaviour("reply", content=REJECTED_NARRATIVE, delay=45)

    llm_server.call(hang).reply(VERIFIED_NARRATIVE)
    assert api_client.post("/api/v1/results", payroll_payload, format="json").status_code == 201
    assert first_call.wait(WAIT_SECONDS), worker.output()[-3000:]
    children = worker.pool_children()
    assert children, worker.output()[-3000:]
    for pid in children:
        os.kill(pid, signal.SIGKILL)

    wait_until(lambda: explanation_done("sim-2026-03-0001"), "the redelivered explanation", worker)
    assert "WorkerLostError" in worker.output()
    assert len(llm_server.requests) == 2
    explanation = Explanation.objects.get()
    assert explanation.outcome == "verified"

    # Delivered once more after the write: no model call, same explanation.
    result = Result.objects.get()
    async_result = explain_result.delay(result.pk)
    wait_until(
        lambda: TaskResult.objects.filter(task_id=async_result.id, status="SUCCESS").exists(), "the re-run", worker
    )
    assert '"model_called": false' in TaskResult.objects.get(task_id=async_result.id).result
    assert len(llm_server.requests) == 2
    assert Explanation.objects.count() == 1
