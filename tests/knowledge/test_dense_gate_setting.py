"""KNOWLEDGE_DENSE_GATE: when the router embeds a part; a value it does not know stops the start."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ = "import django; django.setup(); from knowledge.routing_service import _router_config_read as r; print(r().dense_gate)"


def _read(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KNOWLEDGE_DENSE_GATE"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    if value is not None:
        env["KNOWLEDGE_DENSE_GATE"] = value
    return subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_every_part_is_embedded_unless_the_environment_names_a_gate():
    assert _read(None).stdout.split()[-1] == "always"  # chosen by leave-one-catalog-out (sixteenth round)
    assert _read("covered").stdout.split()[-1] == "covered"
    assert _read("bm25_strong").stdout.split()[-1] == "bm25_strong"


def test_an_unknown_gate_stops_the_start_with_a_clear_message():
    done = _read("alwyas")
    assert done.returncode != 0
    assert "KNOWLEDGE_DENSE_GATE must be always, covered, bm25_strong or agreement, not 'alwyas'" in done.stderr
