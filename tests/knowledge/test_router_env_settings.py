"""Router settings the environment names (KNOWLEDGE_QUESTIONS_WEIGHT, KNOWLEDGE_DENSE_GATE,
KNOWLEDGE_MESSAGE_MEANING, KNOWLEDGE_BACKGROUND).

Settings read the environment at import, so each reading runs in a fresh interpreter; a value the
setting refuses stops the start with a message that names the variable and the value.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _read(variable: str, value: str | None, field: str) -> subprocess.CompletedProcess:
    """``router_config().<field>`` in a fresh process whose environment sets ``variable`` to ``value``."""
    env = {k: v for k, v in os.environ.items() if k != variable}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings.base"
    if value is not None:
        env[variable] = value
    code = f"import django; django.setup(); from knowledge.routing_service import _router_config_read as r; print(r().{field})"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _questions_weight(value: str | None) -> subprocess.CompletedProcess:
    return _read("KNOWLEDGE_QUESTIONS_WEIGHT", value, "weights['questions']")


def _gate(value: str | None) -> subprocess.CompletedProcess:
    return _read("KNOWLEDGE_DENSE_GATE", value, "dense_gate")


def test_the_environment_sets_or_turns_off_the_questions_signal():
    assert _questions_weight(None).stdout.split()[-1] == "1.0"  # the default, chosen by leave-one-catalog-out
    assert _questions_weight("0").stdout.split()[-1] == "0.0"
    assert _questions_weight("2.5").stdout.split()[-1] == "2.5"


def test_a_bad_questions_weight_stops_the_start_with_a_clear_message():
    for bad in ("-1", "lots"):
        done = _questions_weight(bad)
        assert done.returncode != 0
        assert f"KNOWLEDGE_QUESTIONS_WEIGHT must be a number from 0 (off) to 100, not '{bad}'" in done.stderr


def test_every_part_is_embedded_unless_the_environment_names_a_gate():
    assert _gate(None).stdout.split()[-1] == "always"  # chosen by leave-one-catalog-out (sixteenth round)
    assert _gate("covered").stdout.split()[-1] == "covered"
    assert _gate("bm25_strong").stdout.split()[-1] == "bm25_strong"


def test_an_unknown_gate_stops_the_start_with_a_clear_message():
    done = _gate("alwyas")
    assert done.returncode != 0
    assert "KNOWLEDGE_DENSE_GATE must be always, covered, bm25_strong or agreement, not 'alwyas'" in done.stderr


def _message(value: str | None, field: str) -> subprocess.CompletedProcess:
    return _read("KNOWLEDGE_MESSAGE_MEANING", value, field)


def test_the_whole_message_is_embedded_unless_the_environment_says_parts_or_off():
    assert _message(None, "weights['message']").stdout.split()[-1] == "3.0"  # leave-one-catalog-out
    assert _message(None, "message_from_parts").stdout.split()[-1] == "False"
    assert _message("parts", "message_from_parts").stdout.split()[-1] == "True"
    assert _message("parts", "weights['message']").stdout.split()[-1] == "3.0"
    assert _message("off", "weights['message']").stdout.split()[-1] == "0.0"


def test_an_unknown_message_meaning_stops_the_start_with_a_clear_message():
    done = _message("whole", "message_from_parts")
    assert done.returncode != 0
    assert "KNOWLEDGE_MESSAGE_MEANING must be embed, parts or off, not 'whole'" in done.stderr


def _background(value: str | None) -> subprocess.CompletedProcess:
    return _read("KNOWLEDGE_BACKGROUND", value, "background_margin, r().background_margin_examples")


def test_the_background_is_on_unless_the_environment_turns_it_off():
    assert _background(None).stdout.split()[-2:] == ["0.09", "0.05"]  # leave-one-catalog-out (twentieth round)
    assert _background("on").stdout.split()[-2:] == ["0.09", "0.05"]
    assert _background("off").stdout.split()[-2:] == ["9.0", "9.0"]


def test_an_unknown_background_value_stops_the_start_with_a_clear_message():
    done = _background("no")
    assert done.returncode != 0
    assert "KNOWLEDGE_BACKGROUND must be on or off, not 'no'" in done.stderr
