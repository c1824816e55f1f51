"""The CPU of one agent turn inside the server, measured in-process (issue 17).

Runs the production WSGI application (``config.wsgi.application``: every
middleware, DRF's authentication, throttling, parsing, the turn, the JSON
renderer) in this process against PostgreSQL (BENCH_DATABASE_URL, default the
load bench's scratch database), Redis (BENCH_REDIS_URL, default db 4 on
127.0.0.1) and a zero-latency scripted model (bench/load_turns.py's, in its own
process), one turn after another, and prints the CPU time per turn
(``time.process_time``: this process only), the CPU the bench database's
PostgreSQL backends spent meanwhile (load_turns' sampler: each backend's CPU from
/proc, so PostgreSQL must run on this machine) and the queries per turn. ``--profile`` adds cProfile's top functions.

    .venv/bin/python bench/profile_turn.py                   # 2,000 turns, CPU ms per turn
    .venv/bin/python bench/profile_turn.py --profile --turns 1000
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def environ_for(method: str, path: str, token: str, body: dict | None) -> dict:
    payload = json.dumps(body).encode() if body is not None else b""
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Token {token}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(payload)),
        "wsgi.input": io.BytesIO(payload),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def call(app, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
    status = []
    chunks = app(environ_for(method, path, token, body), lambda s, h, exc_info=None: status.append(s))
    try:
        data = b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()
    return int(status[0].split()[0]), json.loads(data) if data else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--turns-per-session", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--profile", action="store_true", help="cProfile the measured turns")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative)")
    parser.add_argument("--dump", metavar="PATH", help="with --profile: also write the raw cProfile stats here")
    args = parser.parse_args()

    from load_turns import DEFAULT_DB, QUESTIONS, ConnectionSampler, ensure_database, start_model

    database_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(database_url)
    model, model_port = start_model(0.0)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DATABASE_URL": database_url,
            "SECRET_KEY": os.environ.get("SECRET_KEY") or "profile-turn-" + "x" * 40,
            "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/4"),
            "DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            "KNOWLEDGE_CATALOG_DIR": str(ROOT / "knowledge" / "catalog"),
            "API_THROTTLE_RATE": "1000000/min",
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": f"http://127.0.0.1:{model_port}/v1",
            "LLM_MODEL": "scripted-model",
            "LLM_TIMEOUT": "10",
            "LLM_MAX_RETRIES": "0",
            "PROMETHEUS_MULTIPROC_DIR": str(ROOT / "var" / "profile-prometheus"),
        }
    )
    Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", "--noinput", verbosity=0)
        call_command("load_catalog", verbosity=0)
        from accounts.models import Tenant

        if not Tenant.objects.filter(slug="bench").exists():
            call_command("create_tenant", "bench", "--name", "Bench", verbosity=0)
        out = io.StringIO()
        call_command("create_api_token", "bench-user", "--tenant", "bench", "--create-user", stdout=out)
        token = out.getvalue().strip()
        from django.db import connection, reset_queries

        from config.wsgi import application

        def run(turns: int) -> tuple[int, int]:
            session, sent, statuses = None, 0, 0
            for n in range(turns):
                if session is None or sent >= args.turns_per_session:
                    status, data = call(application, "POST", "/api/v1/sessions", token, {})
                    assert status == 201, data
                    session, sent = data["id"], 0
                status, data = call(
                    application,
                    "POST",
                    f"/api/v1/sessions/{session}/messages",
                    token,
                    {"message": QUESTIONS[n % len(QUESTIONS)]},
                )
                assert status == 201, data
                sent += 1
                statuses += 1
            return statuses, 0

        run(args.warmup)
        # queries of one turn (Django records them with force_debug_cursor)
        connection.force_debug_cursor = True
        reset_queries()
        call(application, "POST", "/api/v1/sessions", token, {})  # a fresh session is not counted below
        status, data = call(application, "POST", "/api/v1/sessions", token, {})
        reset_queries()
        call(application, "POST", f"/api/v1/sessions/{data['id']}/messages", token, {"message": QUESTIONS[0]})
        turn_queries = [q["sql"][:110] for q in connection.queries]
        connection.force_debug_cursor = False

        # CPU time, not wall time: waiting on PostgreSQL, Redis or the model costs this process nothing.
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        with ConnectionSampler(database_url) as sampler:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            run(args.turns)
            if profiler:
                profiler.disable()
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        sessions = -(-args.turns // args.turns_per_session)
        print(
            json.dumps(
                {
                    "turns": args.turns,
                    "sessions_opened": sessions,
                    "cpu_ms_per_turn": round(cpu * 1000 / args.turns, 3),
                    "postgres_cpu_ms_per_turn": round(sampler.postgres_cpu_s * 1000 / args.turns, 3),
                    "wall_ms_per_turn": round(wall * 1000 / args.turns, 3),
                    "queries_per_turn": len(turn_queries),
                    "loadavg": [round(x, 2) for x in os.getloadavg()],
                    "profiled": bool(profiler),
                }
            )
        )
        for sql in turn_queries:
            print("   ", sql)
        if profiler:
            if args.dump:
                profiler.dump_stats(args.dump)
            stats = pstats.Stats(profiler)
            stats.sort_stats(args.sort).print_stats(args.top)
    finally:
        model.terminate()
        model.wait(timeout=10)


if __name__ == "__main__":
    main()
