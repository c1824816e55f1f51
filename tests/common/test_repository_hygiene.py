"""What must never be committed: local state that a checkout would then overwrite."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEVER_TRACKED = (".venv", "var", "node_modules")


def _tracked(path: str) -> list[str]:
    result = subprocess.run(["git", "ls-files", "--", path], cwd=ROOT, capture_output=True, text=True, check=False)
    return result.stdout.split()


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("path", NEVER_TRACKED)
def test_local_state_is_never_tracked(path):
    # A tracked .venv (even a symlink a worktree made) replaces the real virtualenv on checkout
    # and breaks a fresh clone's set-up.
    assert _tracked(path) == []
