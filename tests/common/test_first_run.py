"""`scripts/run --setup-only` for real, in a throw-away var/ (CONTEXTO_VAR_DIR), with this virtualenv.

Embedded mode must leave everything the README's examples use; production mode must
print no credentials unless `--demo` is asked for.
"""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _setup(tmp_path: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    keep = ("PATH", "HOME", "LANG", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({"CONTEXTO_VENV": sys.prefix, "CONTEXTO_VAR_DIR": str(tmp_path / "var"), **env_extra})
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "run"), "--setup-only", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()


def _groups_of(db: Path, username: str) -> set[str]:
    return {
        name
        for (name,) in _rows(
            db,
            "select g.name from auth_group g join auth_user_groups ug on ug.group_id = g.id "
            f"join auth_user u on u.id = ug.user_id where u.username = '{username}'",
        )
    }


def test_embedded_first_run_loads_every_fixture_the_readme_uses(tmp_path):
    result = _setup(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    db = tmp_path / "var" / "contexto.sqlite3"
    packages = {pid for (pid,) in _rows(db, "select package_id from knowledge_package where is_active")}
    assert {"PRICING_RULES", "WORK_PERMIT_OVERVIEW", "SCAFFOLD"} <= packages  # bundled + demo catalog
    assert _rows(db, "select count(*) from conversations_semanticelement")[0][0] >= 20  # the registry example
    states = dict(_rows(db, "select state, count(*) from ontology_chunk group by state"))
    assert states == {"indexed": 74}  # critical chunks too: validated by the validator account
    assert _groups_of(db, "curator") == {"curators", "auditors"}
    assert _groups_of(db, "validator") == {"validators"}
    assert _rows(db, "select count(*) from conversations_accessibleentity")[0][0] == 3
    assert {g for (g,) in _rows(db, "select name from auth_group")} >= {
        "curators",
        "validators",
        "operators",
        "auditors",
    }
    token = _rows(db, "select key from authtoken_token t join auth_user u on u.id = t.user_id where username='curator'")
    assert f"API token   : {token[0][0]}" in result.stdout  # printed once, on creation

    again = _setup(tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert token[0][0] not in again.stdout and "admin login" not in again.stdout
    assert "74 unchanged" in again.stdout

    # A turn through the API on the embedded database (SQLite), as the README's first steps do:
    # the turn's hand-written statements must fit SQLite too (no FOR UPDATE; naive datetimes
    # converted as the ORM does, or token authentication raises comparing them).
    turn = _embedded_turn(tmp_path, token[0][0])
    assert turn.returncode == 0, turn.stderr[-3000:]
    assert "TURN 201 " in turn.stdout and "SECOND 201 " in turn.stdout, turn.stdout[-2000:]


_TURN_SCRIPT = """
import json
from django.test import Client
c = Client(HTTP_AUTHORIZATION="Token " + TOKEN, HTTP_HOST="localhost")
r = c.post("/api/v1/sessions", data={}, content_type="application/json")
assert r.status_code == 201, (r.status_code, r.content[:500])
sid = r.json()["id"]
for label in ("TURN", "SECOND"):
    r = c.post(f"/api/v1/sessions/{sid}/messages", data={"message": "Qual o prazo do sequenciamento Sanger?"},
               content_type="application/json")
    print(label, r.status_code, json.dumps(r.json())[:200])
"""


def _embedded_turn(tmp_path: Path, token: str) -> subprocess.CompletedProcess:
    keep = ("PATH", "HOME", "LANG")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({"CONTEXTO_VAR_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": "config.settings.base"})
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", f"TOKEN = {token!r}\n" + _TURN_SCRIPT],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_production_prints_no_credentials_unless_demo_is_asked_for(tmp_path):
    production = {"DATABASE_URL": f"sqlite:///{tmp_path / 'prod.sqlite3'}", "SECRET_KEY": "test-only-production-key"}
    result = _setup(tmp_path, **production)
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    assert "API token" not in output and "admin login" not in output and "password" not in output.lower()
    db = tmp_path / "prod.sqlite3"
    assert _rows(db, "select count(*) from auth_user")[0][0] == 0
    assert _rows(db, "select count(*) from authtoken_token")[0][0] == 0
    assert not {pid for (pid,) in _rows(db, "select package_id from knowledge_package") if pid.startswith("WORK_")}

    with_demo = _setup(tmp_path, "--demo", **production)
    assert with_demo.returncode == 0, with_demo.stderr[-3000:]
    key = _rows(db, "select key from authtoken_token")[0][0]
    assert f"API token   : {key}" in with_demo.stdout
