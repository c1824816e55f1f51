"""Fault and load runs an operator can repeat: what was sent, what was answered, what was lost.

Everything is local and bounded. The script starts its own Redis (a free loopback
port, killed at the end), its own gunicorn (config/gunicorn.conf.py) and, for the
worker scenario, its own Celery worker, against the PostgreSQL database named by
BENCH_DATABASE_URL (created if missing; default contexto_bench on 127.0.0.1).
It never touches another Redis or another database's connections.

    .venv/bin/python bench/bench_reliability.py                 # every scenario
    .venv/bin/python bench/bench_reliability.py load cache-down # some of them
    .venv/bin/python bench/bench_reliability.py load --clients 50 --seconds 60

Scenarios: load, cache-down, broker-hung, db-terminate, slow-clients,
provider-down, worker-kill. Each prints one line of JSON; paste the figures into
docs/operations.md.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BIN = Path(PY).parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/contexto_bench"
SCENARIOS = ["load", "cache-down", "broker-hung", "db-terminate", "slow-clients", "provider-down", "worker-kill"]
QUESTIONS = ["qual o prazo de entrega?", "preço do sequenciamento", "como enviar amostras?", "what is the price?"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    """Own Redis + gunicorn (+ optional Celery worker) on loopback ports, stopped by pid."""

    def __init__(self, database_url: str, llm_base_url: str = ""):
        self.database_url = database_url
        self.redis_port = free_port()
        self.port = free_port()
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DATABASE_URL": database_url,
            "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "KNOWLEDGE_CATALOG_DIR": str(ROOT / "knowledge" / "catalog"),
            "API_THROTTLE_RATE": "1000000/min",
            "CELERY_BROKER_SOCKET_TIMEOUT": "1",
            "GUNICORN_READ_TIMEOUT": "5",
            "PROMETHEUS_MULTIPROC_DIR": str(ROOT / "var" / "bench-prometheus"),
            "PYTHONPATH": str(ROOT),
        }
        if llm_base_url:
            self.env.update({"LLM_PROVIDER": "openai", "LLM_BASE_URL": llm_base_url, "LLM_TIMEOUT": "2"})
        Path(self.env["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [PY, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300
        )
        if done.returncode:
            raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-2000:]}")
        return done.stdout.strip()

    def start_redis(self) -> None:
        self.procs["redis"] = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.redis_port), timeout=0.5):
                return
            time.sleep(0.1)
        raise SystemExit("redis-server did not start")

    def start(self, worker: bool = False) -> str:
        self.start_redis()
        self.manage("migrate", "--noinput")
        self.manage("load_catalog")
        with contextlib.suppress(SystemExit):
            self.manage("create_tenant", "bench", "--name", "Bench")
        token = self.manage("create_api_token", "bench-user", "--tenant", "bench", "--create-user")
        self.procs["gunicorn"] = subprocess.Popen(
            [str(BIN / "gunicorn"), "config.wsgi:application", "--config", "config/gunicorn.conf.py",
             "--bind", f"127.0.0.1:{self.port}"],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if worker:
            self.start_worker()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if request(self.port, "GET", "/healthz", timeout=1)[0] == 200:
                    return token
            time.sleep(0.2)
        raise SystemExit("gunicorn did not start")

    def start_worker(self) -> subprocess.Popen:
        proc = subprocess.Popen(
            [PY, "-m", "celery", "-A", "config", "worker", "--pool=prefork", "--concurrency=2",
             "--loglevel=WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-n", f"bench-{secrets.token_hex(4)}@%h"],
            cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.procs[f"worker-{proc.pid}"] = proc
        return proc

    def stop(self) -> None:
        for name, proc in reversed(list(self.procs.items())):
            if proc.poll() is None:
                if name.startswith("worker"):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.send_signal(signal.SIGCONT)
                    proc.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=15)
                if proc.poll() is None:
                    proc.kill()


def request(port: int, method: str, path: str, body=None, token: str = "", timeout: float = 30.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    started = time.monotonic()
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = conn.getresponse()
        data = response.read()
        return response.status, data, time.monotonic() - started
    finally:
        conn.close()


def mixed_load(port: int, token: str, clients: int, seconds: float, sessions: list[int]) -> dict:
    """``clients`` threads sending a mix of reads, routed questions and agent turns for ``seconds``."""
    statuses: Counter = Counter()
    latencies: list[float] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client(n: int) -> None:
        rng = random.Random(n)
        while time.monotonic() < deadline:
            kind = rng.random()
            try:
                if kind < 0.4:
                    status, _, took = request(port, "GET", "/api/v1/packages", token=token)
                elif kind < 0.8:
                    body = {"message": rng.choice(QUESTIONS)}
                    status, _, took = request(port, "POST", "/api/v1/context", body, token=token)
                else:
                    path = f"/api/v1/sessions/{rng.choice(sessions)}/messages"
                    status, _, took = request(port, "POST", path, {"message": rng.choice(QUESTIONS)}, token=token)
            except OSError as exc:
                status, took = f"socket:{type(exc).__name__}", 0.0
            with lock:
                statuses[status] += 1
                if took:
                    latencies.append(took)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 120)
    latencies.sort()
    sent = sum(statuses.values())
    return {
        "sent": sent,
        "answered": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "server_errors": sum(v for k, v in statuses.items() if isinstance(k, int) and k >= 500 and k != 503),
        "unanswered": sum(v for k, v in statuses.items() if not isinstance(k, int)),
        "rps": round(sent / seconds, 1),
        "p50_ms": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 1) if latencies else None,
    }


def make_sessions(port: int, token: str, count: int = 5) -> list[int]:
    ids = []
    for _ in range(count):
        status, data, _ = request(port, "POST", "/api/v1/sessions", {}, token=token)
        assert status == 201, (status, data[:200])
        ids.append(json.loads(data)["id"])
    return ids


def ready(port: int) -> dict:
    status, data, took = request(port, "GET", "/readyz", timeout=30)
    return {"status": status, "took_ms": round(took * 1000), **json.loads(data)}


def scenario_load(stack: Stack, token: str, args) -> dict:
    sessions = make_sessions(stack.port, token)
    load = mixed_load(stack.port, token, args.clients, args.seconds, sessions)
    return {"clients": args.clients, "seconds": args.seconds, **load}


def scenario_cache_down(stack: Stack, token: str, args) -> dict:
    sessions = make_sessions(stack.port, token)
    redis = stack.procs.pop("redis")
    redis.kill()
    redis.wait()
    try:
        probe = ready(stack.port)
        load = mixed_load(stack.port, token, 10, min(args.seconds, 15), sessions)
    finally:
        stack.start_redis()
    return {"readyz": probe["checks"], "readyz_status": probe["status"], **load}


def scenario_broker_hung(stack: Stack, token: str, args) -> dict:
    sessions = make_sessions(stack.port, token)
    redis = stack.procs["redis"]
    redis.send_signal(signal.SIGSTOP)  # accepts connections, never answers
    try:
        probes = [ready(stack.port) for _ in range(2)]
        health = request(stack.port, "GET", "/healthz", timeout=10)
        load = mixed_load(stack.port, token, 10, min(args.seconds, 15), sessions)
        status, _, took = request(
            stack.port, "POST", "/api/v1/results",
            {"result_id": f"hung-{secrets.token_hex(3)}", "verdict": "ok", "totals": {"custo": 1}}, token=token,
        )  # fmt: skip
    finally:
        redis.send_signal(signal.SIGCONT)
    return {
        "readyz_ms": [p["took_ms"] for p in probes],
        "readyz_checks": probes[-1]["checks"],
        "healthz_ms": round(health[2] * 1000),
        "result_post": {"status": status, "ms": round(took * 1000)},
        **load,
    }


def scenario_db_terminate(stack: Stack, token: str, args) -> dict:
    sessions = make_sessions(stack.port, token)
    dbname = psycopg.conninfo.conninfo_to_dict(psycopg.conninfo.make_conninfo(stack.database_url))
    stop = threading.Event()
    terminated = Counter()

    def terminator() -> None:
        with psycopg.connect(stack.database_url, autocommit=True) as admin:
            while not stop.wait(1.0):
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).fetchall()
                terminated["backends"] += sum(1 for (ok,) in rows if ok)

    thread = threading.Thread(target=terminator)
    thread.start()
    try:
        load = mixed_load(stack.port, token, 20, min(args.seconds, 30), sessions)
    finally:
        stop.set()
        thread.join(timeout=10)
    return {"database": dbname.get("dbname"), "backends_terminated": terminated["backends"], **load}


def scenario_slow_clients(stack: Stack, token: str, args) -> dict:
    stalled = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", stack.port), timeout=30)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        stalled.append(sock)
    short = socket.create_connection(("127.0.0.1", stack.port), timeout=30)
    short.sendall(b"POST /api/v1/context HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    try:
        time.sleep(0.5)
        health = [round(request(stack.port, "GET", "/healthz", timeout=30)[2] * 1000) for _ in range(3)]
        started = time.monotonic()
        answer = short.recv(200)
        short_ms = round((time.monotonic() - started) * 1000)
    finally:
        for sock in [*stalled, short]:
            sock.close()
    return {
        "stalled_sockets": len(stalled),
        "healthz_ms": health,
        "short_body_answer": answer.split(b"\r\n", 1)[0].decode(),
        "short_body_ms": short_ms,
    }


def scenario_provider_down(stack: Stack, token: str, args) -> dict:
    sessions = make_sessions(stack.port, token, count=args.turns)
    outcomes: Counter = Counter()
    for session in sessions:
        status, data, _ = request(
            stack.port, "POST", f"/api/v1/sessions/{session}/messages", {"message": "qual o prazo?"}, token=token
        )
        body = json.loads(data)
        outcomes[f"{status}:{body.get('status', body.get('error', {}).get('code'))}"] += 1
    return {"turns_sent": len(sessions), "answered": dict(outcomes)}


def scenario_worker_kill(stack: Stack, token: str, args) -> dict:
    worker = next(p for name, p in stack.procs.items() if name.startswith("worker"))
    time.sleep(8)  # the worker's start
    ids = [f"kill-{secrets.token_hex(4)}-{n}" for n in range(args.results)]
    for result_id in ids:
        body = {"result_id": result_id, "verdict": "ok", "totals": {"c": 1}}
        request(stack.port, "POST", "/api/v1/results", body, token=token)
    os.killpg(worker.pid, signal.SIGKILL)  # the whole worker, no warm shutdown
    worker.wait()
    stack.start_worker()
    started = time.monotonic()
    done, last_progress = 0, 0.0
    # Bounded wait: what a killed worker was running comes back only after the visibility timeout.
    while time.monotonic() - started < 90:
        answers = [request(stack.port, "GET", f"/api/v1/results/{r}/explanation", token=token)[1] for r in ids]
        now_done = sum(json.loads(answer)["status"] == "done" for answer in answers)
        if now_done > done:
            done, last_progress = now_done, time.monotonic() - started
        if done == len(ids):
            break
        time.sleep(0.5)
    return {
        "results_sent": len(ids),
        "explained_after_kill": done,
        "waiting_for_visibility_timeout": len(ids) - done,
        "seconds_until_last_explained": round(last_progress, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="*", default=SCENARIOS, choices=SCENARIOS)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--results", type=int, default=10)
    args = parser.parse_args()
    database_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [info["dbname"]]).fetchone():
            admin.execute(f'CREATE DATABASE "{info["dbname"]}"')
    runners = {
        "load": scenario_load,
        "cache-down": scenario_cache_down,
        "broker-hung": scenario_broker_hung,
        "db-terminate": scenario_db_terminate,
        "slow-clients": scenario_slow_clients,
        "provider-down": scenario_provider_down,
        "worker-kill": scenario_worker_kill,
    }
    for name in args.scenarios:
        # The provider-down stack points the LLM at a closed port: every turn must become a hand-off.
        llm = f"http://127.0.0.1:{free_port()}/v1" if name == "provider-down" else ""
        stack = Stack(database_url, llm_base_url=llm)
        try:
            token = stack.start(worker=name == "worker-kill")
            result = runners[name](stack, token, args)
        finally:
            stack.stop()
        print(json.dumps({"scenario": name, **result}), flush=True)


if __name__ == "__main__":
    main()
