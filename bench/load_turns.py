"""Agent turns under load: what a turn costs besides the model, and whether anything is lost.

Everything is local and bounded. The script starts a scripted model (an
OpenAI-compatible chat server that answers every call after ``--model-delay``
seconds, in its own process), its own Redis and gunicorn (config/gunicorn.conf.py,
through bench_reliability's harness) against the PostgreSQL database named by
BENCH_DATABASE_URL (created if missing; default contexto_load_turns on 127.0.0.1),
waits until every gunicorn worker has finished its start-up, warms them for
``--warmup`` seconds, runs ``--clients`` concurrent clients for ``--seconds`` and
stops everything it started. Each client opens its own session and sends turns
one after the other on a kept-alive connection, paced so that all clients
together offer ``--rate`` turns per second (0: as fast as answered), opening a
fresh session every ``--turns-per-session`` turns (so ``POST /sessions`` is
measured too).

The questions: by default four, repeated (the router's route cache and the question
embedding cache answer most turns after the first few). ``--questions CATALOG`` sends
instead the dev questions of a labeled catalog (knowledge/evaluation/catalogs/CATALOG/
questions.dev.json, never the test split) against that catalog's own packages, each
turn a question no turn of the run asked before: once every dev question is used, they
come again with the round's number appended ("… #2"), so neither cache ever answers.

    .venv/bin/python bench/load_turns.py all        # every run below, one after the other, and a summary table
    .venv/bin/python bench/load_turns.py light      # 20 clients offering 40 turns/s (unsaturated), zero-latency model
    .venv/bin/python bench/load_turns.py fast       # 20 clients offering 150 turns/s, zero-latency model, 30 s
    .venv/bin/python bench/load_turns.py sustained  # the same for 60 s
    .venv/bin/python bench/load_turns.py max        # 20 clients, closed loop: the throughput ceiling
    .venv/bin/python bench/load_turns.py slow       # 50 clients, closed loop, a model taking 2 s per call
    .venv/bin/python bench/load_turns.py max --clients 2 --seconds 3 --warmup 1   # a smoke run
    .venv/bin/python bench/load_turns.py sustained --questions hospital   # distinct questions, no cache hits

Printed per run (one JSON line): p50/p95/p99 per endpoint, the turn's overhead
(the client's wall time minus the model time the server reports in
``timings_ms.llm``), throughput, errors by status, the CPU time of every process
started and the load average; then the stored-rows check: every accepted turn
(201) must have its inbound message (processed) and its reply with the stored
response, and no bench session may hold a half-written turn.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reliability import BIN, PY, ROOT, Stack, free_port, request  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/contexto_load_turns"
# rate: turns per second offered by all clients together (each paced at rate/clients); 0 = each
# client sends its next turn as soon as the last is answered (a closed loop: the throughput ceiling).
PRESETS = {
    "light": {"clients": 20, "seconds": 30.0, "model_delay": 0.0, "rate": 40.0},
    "fast": {"clients": 20, "seconds": 30.0, "model_delay": 0.0, "rate": 150.0},
    "sustained": {"clients": 20, "seconds": 60.0, "model_delay": 0.0, "rate": 150.0},
    "max": {"clients": 20, "seconds": 30.0, "model_delay": 0.0, "rate": 0.0},
    "slow": {"clients": 50, "seconds": 30.0, "model_delay": 2.0, "rate": 0.0},
}
QUESTIONS = ["qual o prazo de entrega?", "preço do sequenciamento", "como enviar amostras?", "what is the price?"]
LABELED_CATALOGS = ROOT / "knowledge" / "evaluation" / "catalogs"
MODEL_REPLY = json.dumps({"s": 0, "message": "Resposta do modelo roteirizado."})


class Questions:
    """What each turn asks: the four QUESTIONS in turn per client (the default), or a labeled
    catalog's dev questions, each turn a text no earlier turn of the process sent."""

    def __init__(self, catalog: str | None = None):
        self.catalog = catalog
        self.sent = 0
        self.dev: list[str] = []
        if catalog:
            path = LABELED_CATALOGS / catalog / "questions.dev.json"  # the dev split only, never test
            if not path.is_file():
                raise SystemExit(f"no labeled catalog {catalog!r} (knowledge/evaluation/catalogs/*/questions.dev.json)")
            self.dev = list(dict.fromkeys(q["query"] for q in json.loads(path.read_text(encoding="utf-8"))))

    @property
    def packages_dir(self) -> Path | None:
        return LABELED_CATALOGS / self.catalog / "packages" if self.catalog else None

    @property
    def label(self) -> str:
        return f"{self.catalog} dev, distinct ({len(self.dev)} + rounds)" if self.catalog else "4 repeated"

    def next(self, client: int, sent_in_session: int) -> str:
        if not self.dev:
            return QUESTIONS[(client + sent_in_session) % len(QUESTIONS)]
        round_, index = divmod(self.sent, len(self.dev))
        self.sent += 1
        return self.dev[index] if round_ == 0 else f"{self.dev[index]} #{round_ + 1}"


# --- the scripted model (its own process: its CPU is not the server's nor the clients') -------


async def _model_connection(reader, writer, delay: float) -> None:
    body = json.dumps(
        {
            "id": "chatcmpl-load",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": MODEL_REPLY}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            if delay:
                await asyncio.sleep(delay)
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


def serve_model(port: int, delay: float) -> None:
    async def main() -> None:
        server = await asyncio.start_server(
            lambda r, w: _model_connection(r, w, delay), "127.0.0.1", port, backlog=1024, reuse_address=True
        )
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def start_model(delay: float) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([PY, __file__, "--serve-model", str(port), "--model-delay", str(delay)], cwd=ROOT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            asyncio.run(asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 0.5))
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the scripted model did not start")


# --- clients: one asyncio loop, one kept-alive connection per client -------------------------


class Client:
    def __init__(self, port: int, token: str):
        self.port = port
        self.token = token
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body: dict) -> tuple[int, dict]:
        payload = json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {self.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        ).encode()
        for attempt in (1, 2):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            try:
                self.writer.write(head + payload)
                await self.writer.drain()
                return await self._response()
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _response(self) -> tuple[int, dict]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = dict(line.split(b":", 1) for line in lines[1:] if b":" in line)
        headers = {k.strip().lower(): v.strip() for k, v in headers.items()}
        if b"content-length" in headers:
            data = await self.reader.readexactly(int(headers[b"content-length"]))
        else:
            data = await self.reader.read()
        if headers.get(b"connection", b"").lower() == b"close" or b"content-length" not in headers:
            self.close()
        try:
            return status, json.loads(data) if data else {}
        except ValueError:
            return status, {}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def run_clients(
    port: int,
    token: str,
    clients: int,
    seconds: float,
    turns_per_session: int,
    rate: float = 0.0,
    questions: Questions | None = None,
) -> dict:
    questions = questions or Questions()
    latencies: dict[str, list[float]] = defaultdict(list)
    overheads: list[float] = []
    statuses: dict[str, Counter] = defaultdict(Counter)
    accepted: list[tuple[int, int]] = []  # (session id, reply message id) of every 201 turn
    sessions: list[int] = []
    deadline = time.monotonic() + seconds

    async def timed(client: Client, endpoint: str, method: str, path: str, body: dict):
        started = time.perf_counter()
        try:
            status, data = await client.request(method, path, body)
        except (OSError, asyncio.IncompleteReadError) as exc:
            statuses[endpoint][f"socket:{type(exc).__name__}"] += 1
            client.close()
            return None, None, 0.0
        took = time.perf_counter() - started
        statuses[endpoint][str(status)] += 1
        latencies[endpoint].append(took)
        return status, data, took

    interval = clients / rate if rate else 0.0

    async def one(n: int) -> None:
        client = Client(port, token)
        session, sent = None, 0
        next_at = time.monotonic() + interval * n / clients  # spread the clients' phases
        while time.monotonic() < deadline:
            if interval:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                next_at += interval
                if next_at < time.monotonic() - interval:  # far behind (overloaded): do not burst
                    next_at = time.monotonic()
            if session is None or sent >= turns_per_session:
                status, data, _ = await timed(client, "POST /sessions", "POST", "/api/v1/sessions", {})
                if status != 201:
                    await asyncio.sleep(0.05)
                    continue
                session, sent = data["id"], 0
                sessions.append(session)
            text = questions.next(n, sent)
            path = f"/api/v1/sessions/{session}/messages"
            status, data, took = await timed(client, "POST /sessions/{id}/messages", "POST", path, {"message": text})
            sent += 1
            if status == 201:
                accepted.append((session, data["message_id"]))
                overheads.append(took - data["timings_ms"]["llm"] / 1000)
        client.close()

    started = time.monotonic()
    await asyncio.gather(*(one(n) for n in range(clients)))
    elapsed = time.monotonic() - started
    endpoints = {
        name: {"requests": len(values), **percentiles(values), "statuses": dict(statuses[name])}
        for name, values in latencies.items()
    }
    for name, counts in statuses.items():
        endpoints.setdefault(name, {"requests": 0, "statuses": dict(counts)})
    return {
        "elapsed_s": round(elapsed, 1),
        "turns_accepted": len(accepted),
        "turns_per_s": round(len(accepted) / elapsed, 1),
        "requests_per_s": round(sum(len(v) for v in latencies.values()) / elapsed, 1),
        "endpoints": endpoints,
        "turn_overhead": percentiles(overheads),
        "errors": sum(v for counts in statuses.values() for k, v in counts.items() if k not in ("200", "201")),
        "_accepted": accepted,
        "_sessions": sessions,
    }


def percentiles(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000, 1)

    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": at(0.95), "p99_ms": at(0.99)}


# --- after the run: is every accepted turn stored? -------------------------------------------


def stored_check(database_url: str, accepted: list[tuple[int, int]], sessions: list[int]) -> dict:
    reply_ids = [message_id for _, message_id in accepted]
    with psycopg.connect(database_url) as conn:
        complete = conn.execute(
            "SELECT count(*) FROM conversations_message r JOIN conversations_message i ON i.id = r.reply_to_id"
            " WHERE r.id = ANY(%s) AND r.role = 'assistant' AND r.response IS NOT NULL"
            " AND i.role = 'user' AND i.status = 'processed'",
            [reply_ids],
        ).fetchone()[0]
        rows, unfinished = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE role = 'user' AND status = 'received')"
            " FROM conversations_message WHERE session_id = ANY(%s)",
            [sessions],
        ).fetchone()
    return {
        "accepted_turns": len(reply_ids),
        "stored_complete": complete,
        "message_rows": rows,
        "expected_rows": 2 * len(reply_ids),
        "unfinished_inbound": unfinished,
        "lost": len(reply_ids) - complete,
    }


# --- the run ---------------------------------------------------------------------------------


def process_cpu_seconds(pid: int, children: bool = True) -> float:
    """utime + stime of a process and its live children (gunicorn's workers), from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    try:
        if children:
            pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def worker_pids(master: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{master}/task/{master}/children").read_text().split()]
    except OSError:
        return []


def wait_workers_settled(master: int, limit: float = 180.0) -> float:
    """Wait until every gunicorn worker is past post_worker_init (the ontology's models, seconds of
    CPU on a loaded machine): /healthz answers as soon as one worker is up. Returns the seconds waited."""
    started = time.monotonic()
    quiet = 0
    while time.monotonic() - started < limit and quiet < 2:
        pids = worker_pids(master)
        before = {pid: process_cpu_seconds(pid) for pid in pids}
        time.sleep(0.5)
        busy = [pid for pid in pids if process_cpu_seconds(pid) - before[pid] > 0.1]
        quiet = quiet + 1 if pids and not busy else 0
    return round(time.monotonic() - started, 1)


class ConnectionSampler:
    """The most connections the bench database had open at once, sampled every 0.2 s, and the CPU
    its PostgreSQL backends spent meanwhile (each backend's CPU at its first and last sighting:
    PostgreSQL's shared processes, the WAL writer among them, are not counted)."""

    def __init__(self, database_url: str):
        self.database_url = database_url
        self.peak = 0
        self.backend_cpu_first: dict[int, float] = {}
        self.backend_cpu_last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._first = True

    def _sample(self, conn) -> None:
        pids = [
            row[0]
            for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        ]
        self.peak = max(self.peak, len(pids))
        for pid in pids:
            cpu = process_cpu_seconds(pid, children=False)
            # A backend first seen after the start began during the run: all its CPU counts.
            self.backend_cpu_first.setdefault(pid, cpu if self._first else 0.0)
            self.backend_cpu_last[pid] = cpu
        self._first = False

    def _run(self) -> None:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            self._sample(conn)
            while not self._stop.wait(0.2):
                self._sample(conn)
            self._sample(conn)

    @property
    def postgres_cpu_s(self) -> float:
        return sum(self.backend_cpu_last[pid] - first for pid, first in self.backend_cpu_first.items())

    def __enter__(self) -> "ConnectionSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def cpu_report(seconds: dict[str, float], turns: int, cores: int | None = None) -> dict:
    """CPU seconds per component, the same in ms per accepted turn, and the turns per second the
    machine's cores would carry if this stack had them to itself (cores × 1000 / total ms per turn).
    The per-turn figures include the sessions the clients opened (one per ``--turns-per-session``)."""
    cores = cores or os.cpu_count() or 1
    report: dict = {name: round(value, 2) for name, value in seconds.items()}
    if turns:
        per_turn = {name.removesuffix("_s"): round(value * 1000 / turns, 2) for name, value in seconds.items()}
        total = sum(seconds.values()) * 1000 / turns
        report["ms_per_turn"] = {**per_turn, "total": round(total, 2)}
        report["projected_turns_per_s"] = {
            "cores": cores,
            "whole_stack": round(cores * 1000 / total, 1) if total else None,
            "server_only": round(cores * 1000 / (total - per_turn["clients"] - per_turn["model"]), 1),
        }
    return report


def machine_cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine: how much of it was in use, ours or not."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def ensure_database(database_url: str) -> None:
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [info["dbname"]]).fetchone():
            admin.execute(f'CREATE DATABASE "{info["dbname"]}"')
            return
    # Fresh planner statistics for the rows earlier runs left: on a server with autovacuum off (this
    # development machine's) the turn's history read was planned without them, as a bitmap scan of
    # every message id (7–12 ms of PostgreSQL CPU per turn at 150,000 messages, growing run by run).
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ANALYZE")


def start_stack(stack: Stack) -> str:
    """bench_reliability's start, with gunicorn's errors in var/load_turns-gunicorn.log and a longer wait:
    on a loaded machine the workers' start-up (post_worker_init) can take over a minute."""
    stack.start_redis()
    stack.manage("migrate", "--noinput")
    stack.manage("load_catalog")
    with contextlib.suppress(SystemExit):  # it exists after the first run
        stack.manage("create_tenant", "bench", "--name", "Bench")
    token = stack.manage("create_api_token", "bench-user", "--tenant", "bench", "--create-user")
    log = open(ROOT / "var" / "load_turns-gunicorn.log", "wb")  # noqa: SIM115 - closed with the process
    stack.procs["gunicorn"] = subprocess.Popen(
        [str(BIN / "gunicorn"), "config.wsgi:application", "--config", "config/gunicorn.conf.py",
         "--bind", f"127.0.0.1:{stack.port}"],
        cwd=ROOT, env=stack.env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if stack.procs["gunicorn"].poll() is not None:
            raise SystemExit("gunicorn exited: see var/load_turns-gunicorn.log")
        with contextlib.suppress(OSError):
            if request(stack.port, "GET", "/healthz", timeout=1)[0] == 200:
                return token
        time.sleep(0.5)
    raise SystemExit("gunicorn did not answer /healthz within 300 s")


def run(args, database_url: str) -> dict:
    model, model_port = start_model(args.model_delay)
    stack = Stack(database_url, llm_base_url=f"http://127.0.0.1:{model_port}/v1")
    stack.env.update(
        {
            # A 2 s model must not time out; no retries, so one call is one model wait.
            "LLM_TIMEOUT": str(max(10.0, args.model_delay * 5)),
            "LLM_MAX_RETRIES": "0",
            "LLM_MODEL": "scripted-model",
        }
    )
    questions = Questions(args.questions)
    if questions.packages_dir:  # the labeled questions route against their own catalog
        stack.env["KNOWLEDGE_CATALOG_DIR"] = str(questions.packages_dir)
    for name in ("WEB_CONCURRENCY", "GUNICORN_THREADS", "DB_POOL_MAX_SIZE"):
        value = getattr(args, name.lower())
        if value:
            stack.env[name] = str(value)
    try:
        token = start_stack(stack)
        gunicorn = stack.procs["gunicorn"]
        settled = wait_workers_settled(gunicorn.pid)
        # Warm every worker (imports, the router's index) with as many clients as the run has.
        asyncio.run(
            run_clients(stack.port, token, args.clients, args.warmup, args.turns_per_session, args.rate, questions)
        )
        load_before = os.getloadavg()
        redis = stack.procs["redis"]
        cpu_before = {
            "gunicorn": process_cpu_seconds(gunicorn.pid),
            "model": process_cpu_seconds(model.pid),
            "redis": process_cpu_seconds(redis.pid),
        }
        workers_before = {pid: process_cpu_seconds(pid, children=False) for pid in worker_pids(gunicorn.pid)}
        own_before = resource.getrusage(resource.RUSAGE_SELF)
        machine_before = machine_cpu_ticks()
        wall_started = time.monotonic()
        with ConnectionSampler(database_url) as connections:
            result = asyncio.run(
                run_clients(stack.port, token, args.clients, args.seconds, args.turns_per_session, args.rate, questions)
            )
        wall = time.monotonic() - wall_started
        own_after = resource.getrusage(resource.RUSAGE_SELF)
        machine_after = machine_cpu_ticks()
        cpu = {
            "gunicorn_s": process_cpu_seconds(gunicorn.pid) - cpu_before["gunicorn"],
            "postgres_s": connections.postgres_cpu_s,
            "redis_s": process_cpu_seconds(redis.pid) - cpu_before["redis"],
            "model_s": process_cpu_seconds(model.pid) - cpu_before["model"],
            # this process: the clients' event loop (and the connection sampler's thread)
            "clients_s": own_after.ru_utime + own_after.ru_stime - own_before.ru_utime - own_before.ru_stime,
        }
        cpu = cpu_report(cpu, result["turns_accepted"])
        cpu["wall_s"] = round(wall, 1)
        # Each gunicorn worker's share: a kept-alive client stays with the worker that accepted it, so
        # the split shows whether one worker (one core's worth of Python, the GIL) carried the run.
        cpu["gunicorn_workers_s"] = sorted(
            (round(process_cpu_seconds(pid, children=False) - before, 2) for pid, before in workers_before.items()),
            reverse=True,
        )
        # every process on the machine (PostgreSQL, Redis, other people's work included)
        cpu["machine_busy_pct"] = round(
            100 * (machine_after[0] - machine_before[0]) / max(1, machine_after[1] - machine_before[1]), 1
        )
        load_after = os.getloadavg()
    finally:
        stack.stop()
        model.terminate()
        model.wait(timeout=10)
    stored = stored_check(database_url, result.pop("_accepted"), result.pop("_sessions"))
    return {
        "clients": args.clients,
        "seconds": args.seconds,
        "model_delay_s": args.model_delay,
        "offered_turns_per_s": args.rate or "closed loop",
        "workers": stack.env.get("WEB_CONCURRENCY", "default"),
        "threads": stack.env.get("GUNICORN_THREADS", "default"),
        "questions": questions.label,
        **result,
        "stored": stored,
        "cpu": cpu,
        "db_connections_peak": connections.peak,
        "workers_settled_after_s": settled,
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
    }


SUMMARY_HEADER = (
    "| run | clients | offered | model | turns/s | turn p50 / p95 / p99 ms | overhead p50 / p95 / p99 ms "
    "| errors / lost | CPU ms/turn: gunicorn / postgres / redis / model / clients = total | projected turns/s "
    "(server only) | load avg |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)


def summary_row(result: dict) -> str:
    """One Markdown table row of a run (the README's load table)."""
    turn = result["endpoints"].get("POST /sessions/{id}/messages", {})
    over = result["turn_overhead"]
    cpu = result["cpu"].get("ms_per_turn", {})
    projected = result["cpu"].get("projected_turns_per_s", {})
    offered = result["offered_turns_per_s"]
    return (
        f"| {result['preset']}{'' if result.get('questions', '4 repeated') == '4 repeated' else ', ' + result['questions']}"
        f" | {result['clients']} | {offered if isinstance(offered, str) else f'{offered:g}/s'} "
        f"| {result['model_delay_s']:g} s | {result['turns_per_s']} "
        f"| {turn.get('p50_ms')} / {turn.get('p95_ms')} / {turn.get('p99_ms')} "
        f"| {over.get('p50_ms')} / {over.get('p95_ms')} / {over.get('p99_ms')} "
        f"| {result['errors']} / {result['stored']['lost']} of {result['stored']['accepted_turns']:,} "
        f"| {' / '.join(str(cpu.get(k)) for k in ('gunicorn', 'postgres', 'redis', 'model', 'clients'))} "
        f"= {cpu.get('total')} | {projected.get('whole_stack')} ({projected.get('server_only')}) "
        f"| {result['loadavg_before'][0]} → {result['loadavg_after'][0]} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("preset", nargs="?", default="fast", choices=[*PRESETS, "all"])
    parser.add_argument("--clients", type=int)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--model-delay", type=float)
    parser.add_argument("--rate", type=float, help="turns/s offered by all clients (0: closed loop)")
    parser.add_argument("--turns-per-session", type=int, default=10)
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of load before the measured run")
    parser.add_argument("--web-concurrency", type=int, help="gunicorn workers (default: the config's)")
    parser.add_argument("--gunicorn-threads", type=int, help="threads per worker (default: the config's)")
    parser.add_argument("--db-pool-max-size", type=int, help="database connections per worker (default: settings)")
    parser.add_argument(
        "--questions",
        metavar="CATALOG",
        help="distinct dev questions of this labeled catalog (knowledge/evaluation/catalogs), served its packages",
    )
    parser.add_argument("--serve-model", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        serve_model(args.serve_model, args.model_delay or 0.0)
        return
    database_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(database_url)
    results = []
    for preset in PRESETS if args.preset == "all" else [args.preset]:
        run_args = argparse.Namespace(**vars(args))
        for key, value in PRESETS[preset].items():
            if getattr(args, key) is None:
                setattr(run_args, key, value)
        # Bounded: the run stops by itself even if the clients' deadline were missed.
        if run_args.seconds > 600 or run_args.clients > 500:
            raise SystemExit("at most 600 s and 500 clients")
        result = {"preset": preset, **run(run_args, database_url)}
        print(json.dumps(result), flush=True)
        results.append(result)
    # After "all" on stdout; after one run on stderr, so that stdout's last line stays the run's JSON.
    out = sys.stdout if args.preset == "all" else sys.stderr
    print(SUMMARY_HEADER, file=out)
    for result in results:
        print(summary_row(result), file=out)
    print(
        f"cores: {os.cpu_count()}; CPU = process CPU time per accepted turn (sessions included)", file=out, flush=True
    )
    if any(r["stored"]["lost"] or r["stored"]["unfinished_inbound"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
