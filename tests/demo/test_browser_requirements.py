"""A missing browser skips the browser tests with a reason, except under CI=true."""

import pytest

from tests.browser.conftest import _missing, chromium_path


def test_missing_browser_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="run scripts/install_browser"):
        _missing("Chromium was not found")


def test_missing_browser_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        _missing("Chromium was not found")


def test_chromium_path_honours_an_explicit_path(monkeypatch, tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CHROMIUM_PATH", str(fake))
    assert chromium_path() == str(fake)
