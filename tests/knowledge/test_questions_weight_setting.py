"""KNOWLEDGE_QUESTIONS_WEIGHT: the environment sets the "questions" signal's weight, or turns it off."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READ = (
    "import django; django.setup(); "
    "from knowledge.routing_service import _router_config_read as r; print(r().weights['questions'])"
)


def _read(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KNOWLEDGE_QUESTIONS_WEIGHT"}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    if value is not None:
        env["KNOWLEDGE_QUESTIONS_WEIGHT"] = value
    return subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_the_environment_sets_or_turns_off_the_questions_signal():
    assert _read(None).stdout.split()[-1] == "1.0"  # the default, chosen by leave-one-catalog-out
    assert _read("0").stdout.split()[-1] == "0.0"
    assert _read("2.5").stdout.split()[-1] == "2.5"


def test_a_bad_questions_weight_stops_the_start_with_a_clear_message():
    for bad in ("-1", "lots"):
        done = _read(bad)
        assert done.returncode != 0
        assert f"KNOWLEDGE_QUESTIONS_WEIGHT must be a number from 0 (off) to 100, not '{bad}'" in done.stderr
