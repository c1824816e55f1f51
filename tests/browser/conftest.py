"""Headless Chromium against the live server (pytest-django `live_server`).

The browser is Debian's `chromium` (scripts/install_browser installs it),
driven by Playwright's Python package with `executable_path`: Playwright never
downloads a browser of its own. Without a browser the tests skip with the
reason, except under CI=true, where a missing browser fails the run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.services import api_token_create, tenant_get_or_create

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS_DIR = Path(django_settings.BASE_DIR) / "var" / "test-artifacts"
API_PREFIX = "/api/v1/"


def chromium_path() -> str | None:
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _missing(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: a missing browser fails the run; run scripts/install_browser)", pytrace=False)
    pytest.skip(f"{reason}; run scripts/install_browser to enable the browser tests")


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright's Python package is not installed (pip install -r requirements.txt)")
    path = chromium_path()
    if path is None:
        _missing("Chromium was not found at /usr/bin/chromium (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls (fixtures) are still synchronous, so Django's async guard must not trip.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def artifacts_dir() -> Path:
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS_DIR


@pytest.fixture
def demo_user(transactional_db, settings):
    settings.DEMO_ENABLED = True
    tenant = tenant_get_or_create(slug="demo", name="Demo")
    user = get_user_model().objects.create_user(username="visitante", password="x")
    api_token_create(user=user, tenant=tenant)
    return user


@pytest.fixture
def demo(browser, live_server, demo_user):
    """The demo page, logged in, with every request to the API recorded."""
    client = Client()
    client.force_login(demo_user)
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1360, "height": 900}, locale="pt-BR")
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    page.api_requests = []
    page.on("request", lambda r: API_PREFIX in r.url and page.api_requests.append(r))
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto("/demo/")
    page.wait_for_selector("html[data-demo-ready='true']")
    yield page
    assert not errors, errors
    context.close()
