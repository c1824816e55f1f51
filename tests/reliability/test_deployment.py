"""Production settings pass `check --deploy`, and admin logins are throttled."""

import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = pytest.mark.django_db


def _deploy_check(**overrides) -> subprocess.CompletedProcess:
    db = settings.DATABASES["default"]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SECURE_", "HTTPS", "DEBUG", "SESSION_", "CSRF_"))
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "DEBUG": "false",
            "ALLOWED_HOSTS": "contexto.example.com",
            "HTTPS": "true",
            "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
            "METRICS_TOKEN": secrets.token_urlsafe(24),
            **overrides,
        }
    )
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_https_declared():
    completed = _deploy_check()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "System check identified no issues" in completed.stdout


def test_check_deploy_names_what_is_missing_without_https_or_a_metrics_token():
    completed = _deploy_check(HTTPS="false", METRICS_TOKEN="")
    assert completed.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "contexto.W001"):
        assert warning in completed.stderr, completed.stderr


def test_health_probes_are_not_redirected_to_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/admin/login/").status_code == 301


def test_admin_login_locks_out_after_repeated_failures(client, curator):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        response = client.post("/admin/login/", {"username": "curadora", "password": "wrong"})
        assert response.status_code == 200  # the form again, with its error
    response = client.post("/admin/login/", {"username": "curadora", "password": "wrong"})
    assert response.status_code == 429
    # Locked: even the right password is refused during the cool-off.
    response = client.post("/admin/login/", {"username": "curadora", "password": "curator-pass"})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_successful_login_resets_the_count(client, curator):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/admin/login/", {"username": "curadora", "password": "wrong"})
    response = client.post("/admin/login/", {"username": "curadora", "password": "curator-pass"})
    assert response.status_code == 302
    client.logout()
    response = client.post("/admin/login/", {"username": "curadora", "password": "wrong"})
    assert response.status_code == 200
