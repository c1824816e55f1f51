"""bench/load_turns.py keeps working: a tiny run (one worker, four clients, a few seconds).

No timing is asserted (speed is measured by the script itself, figures in the README);
what must hold at any size: every request answered, every accepted turn stored whole.
The run uses its own scratch database (this run's test database name + ``_load``, kept
between runs so later runs only check migrations), its own Redis and scripted model.

The run also shows that a turn waiting on the model holds no database connection: four
turns wait 1.5 s each on the model with a pool of two connections that makes a request
give up after 1 s. Were the connection held through the model call, two of the four
would wait 1.5 s for one and answer 503.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_a_tiny_load_run_answers_and_stores_every_turn_without_holding_connections_on_the_model():
    db = settings.DATABASES["default"]
    name = (db.get("TEST") or {}).get("NAME") or f"test_{db['NAME']}"
    database_url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{name}_load"
    done = subprocess.run(
        [sys.executable, "bench/load_turns.py", "slow", "--clients", "4", "--seconds", "4", "--warmup", "0.5",
         "--model-delay", "1.5", "--web-concurrency", "1", "--gunicorn-threads", "6", "--db-pool-max-size", "2"],
        cwd=ROOT, env={**os.environ, "BENCH_DATABASE_URL": database_url, "DB_POOL_TIMEOUT": "1"},
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    turns = result["endpoints"]["POST /sessions/{id}/messages"]
    assert turns["requests"] > 0
    assert set(turns["statuses"]) == {"201"}
    assert result["errors"] == 0
    stored = result["stored"]
    assert stored["lost"] == 0
    assert stored["unfinished_inbound"] == 0
    assert stored["stored_complete"] == stored["accepted_turns"] == turns["requests"]
    assert stored["message_rows"] == stored["expected_rows"]
    assert result["db_connections_peak"] <= 2 + 1  # the pool, and the readiness probe's connection at most
    for key in ("p50_ms", "p95_ms", "p99_ms"):
        assert key in turns and key in result["turn_overhead"]


def test_the_labeled_questions_are_the_dev_split_and_never_repeat():
    sys.path.insert(0, str(ROOT / "bench"))
    from load_turns import QUESTIONS, Questions

    dev = json.loads((ROOT / "knowledge/evaluation/catalogs/hospital/questions.dev.json").read_text(encoding="utf-8"))
    test = json.loads((ROOT / "knowledge/evaluation/catalogs/hospital/questions.test.json").read_text(encoding="utf-8"))
    questions = Questions("hospital")
    asked = [questions.next(n % 20, n % 10) for n in range(3 * len(questions.dev) + 5)]
    assert len(set(asked)) == len(asked)  # no cache can answer a turn
    assert asked[: len(questions.dev)] == list(dict.fromkeys(q["query"] for q in dev))
    assert not set(asked) & {q["query"] for q in test}
    assert questions.packages_dir == ROOT / "knowledge/evaluation/catalogs/hospital/packages"
    assert [Questions().next(n, 0) for n in range(4)] == QUESTIONS  # the default is unchanged
    with pytest.raises(SystemExit):
        Questions("no-such-catalog")
