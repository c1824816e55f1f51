"""The README's test command and .ci/run, run against stand-ins.

The scripts are copied next to a stand-in bootstrap and install_browser, with a
PATH holding only bash, dirname and stand-ins for pg_isready, redis-cli, python
and npm, so these tests never start, stop or reach the real services.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/bash\n" + body + "\n")
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path):
    """A copy of scripts/test and .ci/run whose tools are stand-ins."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    (root / ".ci").mkdir()
    shutil.copy(ROOT / "scripts" / "test", root / "scripts" / "test")
    shutil.copy(ROOT / ".ci" / "run", root / ".ci" / "run")
    _stub(root / "scripts" / "bootstrap", ": # the virtualenv is a stand-in here")
    _stub(root / "scripts" / "install_browser", "exit 0")
    _stub(root / "scripts" / "run", 'echo "scripts/run $*" >> "$FAKE_LOG"; exit "${FAKE_RUN_STATUS:-0}"')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "mktemp"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    _stub(bin_dir / "pg_isready", 'exit "${FAKE_PG:-0}"')
    _stub(bin_dir / "redis-cli", 'exit "${FAKE_REDIS:-0}"')
    _stub(
        bin_dir / "python",
        'echo "python $*" >> "$FAKE_LOG"; [ "$2" = ruff ] && exit "${FAKE_RUFF_STATUS:-0}"; exit "${FAKE_PYTEST_STATUS:-0}"',
    )
    return root, bin_dir


def _run(checkout, command: str, *args: str, npm: bool = False, **fake: str) -> subprocess.CompletedProcess:
    root, bin_dir = checkout
    if npm:
        _stub(bin_dir / "npm", 'echo "npm $*" >> "$FAKE_LOG"; exit "${FAKE_NPM_STATUS:-0}"')
    env = {"PATH": str(bin_dir), "FAKE_LOG": str(root / "calls.log"), "HOME": str(root), **fake}
    return subprocess.run(
        [str(bin_dir / "bash"), str(root / command), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _calls(checkout) -> list[str]:
    log = checkout[0] / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_pytest_collecting_no_tests_fails_the_ci_run(checkout):
    result = _run(checkout, ".ci/run", npm=True, FAKE_PYTEST_STATUS="5")
    assert result.returncode == 1
    assert "ERROR: pytest collected no tests." in result.stderr
    assert _calls(checkout)[:3] == ["scripts/run --setup-only", "python -m ruff check .", "python -m pytest"]


def test_a_green_ci_run_sets_up_as_a_first_run_then_runs_both_test_runners(checkout):
    result = _run(checkout, ".ci/run", npm=True)
    assert result.returncode == 0, result.stderr
    assert _calls(checkout) == [
        "scripts/run --setup-only",
        "python -m ruff check .",
        "python -m pytest",
        "npm test --prefix tests/js",
    ]


def test_a_failing_first_run_set_up_fails_the_ci_run_before_the_tests(checkout):
    result = _run(checkout, ".ci/run", npm=True, FAKE_RUN_STATUS="1")
    assert result.returncode == 1
    assert _calls(checkout) == ["scripts/run --setup-only"]


def test_a_lint_or_complexity_failure_fails_the_whole_run_before_pytest(checkout):
    result = _run(checkout, ".ci/run", npm=True, FAKE_RUFF_STATUS="1")
    assert result.returncode == 1
    assert "ERROR: ruff check failed" in result.stderr
    assert _calls(checkout) == ["scripts/run --setup-only", "python -m ruff check ."]


@pytest.mark.parametrize(("pytest_status", "npm_status", "expected"), [("1", "0", 1), ("0", "1", 1), ("2", "1", 2)])
def test_a_failing_runner_fails_the_run(checkout, pytest_status, npm_status, expected):
    result = _run(checkout, "scripts/test", npm=True, FAKE_PYTEST_STATUS=pytest_status, FAKE_NPM_STATUS=npm_status)
    assert result.returncode == expected


def test_arguments_go_to_pytest_and_skip_the_js_tests(checkout):
    result = _run(checkout, "scripts/test", "-k", "catalog", npm=True)
    assert result.returncode == 0
    assert _calls(checkout) == ["python -m pytest -k catalog"]


def test_without_npm_outside_ci_the_js_tests_are_skipped_with_a_warning(checkout):
    # install_browser only warns without CI=true; the run must not then fail on "npm: not found".
    result = _run(checkout, "scripts/test")
    assert result.returncode == 0, result.stderr
    assert "JavaScript tests (tests/js) did not run" in result.stderr


def test_a_missing_postgresql_fails_clearly_before_pytest(checkout):
    # No pg_ctlcluster on PATH: PostgreSQL is "not installed"; nothing falls back to SQLite.
    result = _run(checkout, "scripts/test", npm=True, FAKE_PG="2")
    assert result.returncode == 2
    assert "ERROR: PostgreSQL is not reachable on 127.0.0.1:5432" in result.stderr
    assert "apt-get install postgresql" in result.stderr
    assert _calls(checkout) == []


def test_a_missing_redis_fails_clearly_before_pytest(checkout):
    result = _run(checkout, "scripts/test", npm=True, FAKE_REDIS="1")
    assert result.returncode == 2
    assert "ERROR: Redis is not reachable on 127.0.0.1:6379" in result.stderr
    assert _calls(checkout) == []


def test_the_test_settings_refuse_anything_but_postgresql_and_redis():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    for name, url in (("TEST_DATABASE_URL", "sqlite:////tmp/contexto-never.sqlite3"), ("TEST_REDIS_URL", "")):
        result = subprocess.run(
            [sys.executable, "-c", "import django; django.setup()"],
            env={**env, name: url},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0, name
        assert "ImproperlyConfigured" in result.stderr and name in result.stderr


# --- scripts/run: stopping it stops what it started -------------------------------------


@pytest.fixture
def run_checkout(tmp_path):
    """scripts/run with stand-ins: manage.py commands succeed, the server and worker sleep."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "run", root / "scripts" / "run")
    _stub(root / "scripts" / "bootstrap", ":")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "rm", "mkdir", "sleep", "tr"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    _stub(
        bin_dir / "python",
        'case "$*" in *runserver*) echo "server $$" >> "$FAKE_LOG"; exec sleep 300;; esac\necho "python $*" >> "$FAKE_LOG"',
    )
    _stub(bin_dir / "celery", 'echo "worker $$" >> "$FAKE_LOG"; exec sleep 300')
    _stub(bin_dir / "gunicorn", 'echo "gunicorn $*" >> "$FAKE_LOG"')
    return root, bin_dir


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _started(log: Path, names: set[str]) -> dict[str, int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines() if log.exists() else []
        pids = {line.split()[0]: int(line.split()[1]) for line in lines if line.split()[0] in names}
        if set(pids) == names:
            return pids
        time.sleep(0.1)
    raise AssertionError(f"not started: {names}")


@pytest.mark.parametrize("broker", [False, True], ids=["embedded", "with-broker"])
def test_stopping_scripts_run_stops_the_server_and_the_worker(run_checkout, broker):
    root, bin_dir = run_checkout
    log = root / "calls.log"
    env = {"PATH": str(bin_dir), "FAKE_LOG": str(log), "HOME": str(root), "PORT": "8799"}
    if broker:
        env["REDIS_URL"] = "redis://127.0.0.1:6379/15"
    process = subprocess.Popen(
        [str(bin_dir / "bash"), str(root / "scripts" / "run")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    names = {"server", "worker"} if broker else {"server"}
    try:
        pids = _started(log, names)
        process.terminate()  # what a service manager or `kill PID` sends to scripts/run
        output, _ = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    leftovers = [name for name, pid in pids.items() if _alive(pid)]
    for name in leftovers:
        os.kill(pids[name], 9)
    assert leftovers == [], output
    assert "python manage.py ensure_demo --base-url http://127.0.0.1:8799" in log.read_text()


# --- scripts/run: what each mode sets up, prints and announces -----------------------------


def _run_script(run_checkout, *args, **env_extra) -> tuple[subprocess.CompletedProcess, list[str]]:
    root, bin_dir = run_checkout
    log = root / "calls.log"
    env = {"PATH": str(bin_dir), "FAKE_LOG": str(log), "HOME": str(root), **env_extra}
    result = subprocess.run(
        [str(bin_dir / "bash"), str(root / "scripts" / "run"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, (log.read_text().splitlines() if log.exists() else [])


PRODUCTION = {"DATABASE_URL": "postgres://contexto@db/contexto", "SECRET_KEY": "s"}


def test_embedded_set_up_loads_everything_the_readme_examples_use(run_checkout):
    result, calls = _run_script(run_checkout, "--setup-only", PORT="8123")
    assert result.returncode == 0, result.stderr
    assert calls == [
        "python manage.py migrate --noinput",
        "python manage.py load_catalog",
        "python manage.py embed_packages",
        "python manage.py prepare_router_index",
        "python manage.py ensure_demo --base-url http://127.0.0.1:8123 --validator validator",
        "python manage.py load_demo_workspace --tenant demo",
        "python manage.py ingest_chunks ontology/data/chunks.jsonl --validator validator --no-progress",
        "python manage.py import_capabilities actions/demo/capabilities.yaml",
    ]
    assert "set-up done" in result.stdout


def test_production_set_up_creates_no_demo_account_unless_asked(run_checkout):
    result, calls = _run_script(run_checkout, "--setup-only", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert calls == [
        "python manage.py migrate --noinput",
        "python manage.py load_catalog",
        "python manage.py embed_packages",
        "python manage.py prepare_router_index",
    ]


def test_production_with_the_demo_page_loads_its_capabilities_and_no_account(run_checkout):
    result, calls = _run_script(run_checkout, "--setup-only", **PRODUCTION, DEMO_ENABLED="true")
    assert result.returncode == 0, result.stderr
    assert calls[-1] == "python manage.py import_capabilities actions/demo/capabilities.yaml"
    assert not any("ensure_demo" in c for c in calls)


def test_production_with_demo_creates_the_demo_account(run_checkout):
    result, calls = _run_script(run_checkout, "--setup-only", "--demo", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert calls[-1] == "python manage.py ensure_demo --base-url http://127.0.0.1:8000"
    assert not any("ingest_chunks" in c or "load_demo_workspace" in c for c in calls)


@pytest.mark.parametrize(
    ("env", "demo_listed"),
    [({}, False), ({"DEMO_ENABLED": "true"}, True), ({"DEMO_ENABLED": "False"}, False)],
    ids=["default", "demo-on", "demo-off"],
)
def test_the_production_banner_lists_only_what_is_served(run_checkout, env, demo_listed):
    result, calls = _run_script(run_checkout, **PRODUCTION, **env)
    assert result.returncode == 0, result.stderr
    banner = next(line for line in result.stdout.splitlines() if line.startswith("==> Contexto on"))
    assert "MCP /mcp/" in banner and "admin /admin/" in banner
    assert ("/demo/" in banner) is demo_listed
    assert calls[-1].startswith("gunicorn config.wsgi:application")


def test_the_embedded_banner_lists_the_demo_unless_it_is_switched_off(run_checkout):
    root, bin_dir = run_checkout
    _stub(bin_dir / "python", 'echo "python $*" >> "$FAKE_LOG"')  # runserver returns at once
    result, _ = _run_script(run_checkout)
    assert "demo /demo/" in result.stdout
    result, _ = _run_script(run_checkout, DEMO_ENABLED="0")
    assert "/demo/" not in result.stdout


def test_an_unknown_option_is_refused_before_any_set_up(run_checkout):
    result, calls = _run_script(run_checkout, "--prod")
    assert result.returncode == 2
    assert "unknown option '--prod'" in result.stderr
    assert calls == []
