"""The published schema against the live test server: 0 server errors, 0 schema violations.

schemathesis generates requests from /api/schema/ for every operation and checks
each answer: no 5xx, a documented status, a documented content type, a body
that matches the documented schema. Bounded (examples per operation and a time
budget) so it fits in the test command.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from accounts.models import Membership
from accounts.services import api_token_create, membership_ensure
from conversations.agents_seed import agents_seed_ensure
from conversations.models import Agent, Session

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "40"))
MAX_TIME_SECONDS = int(os.environ.get("SCHEMATHESIS_MAX_TIME", "100"))
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def test_schema_generates_without_warnings(tmp_path):
    # --fail-on-warn: duplicate component names, operationId collisions and the like fail here.
    call_command("spectacular", "--fail-on-warn", "--validate", "--file", str(tmp_path / "schema.yml"))


@pytest.fixture
def fuzz_token(tenant, catalog):
    user = get_user_model().objects.create_user(username="fuzzer", password="x", is_staff=True)
    membership_ensure(user=user, tenant=tenant, role=Membership.Role.ADMIN)
    agents_seed_ensure()
    # A few rows the generated path parameters can hit (ids 1..n are likely guesses).
    for _ in range(3):
        Session.objects.create(tenant=tenant, user=user, agent=Agent.objects.get(slug="atendimento"))
    return api_token_create(user=user, tenant=tenant).key


def test_schemathesis_finds_no_server_error_and_no_schema_violation(live_server, fuzz_token, tmp_path):
    report = tmp_path / "junit.xml"
    command = [
        str(Path(sys.executable).with_name("st")),
        "run",
        f"{live_server.url}/api/schema/?format=json",
        "--header",
        f"Authorization: Token {fuzz_token}",
        "--checks",
        CHECKS,
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(MAX_TIME_SECONDS),
        "--phases",
        "examples,coverage,fuzzing",
        "--seed",
        "16",
        "--workers",
        "1",
        "--request-timeout",
        "20",
        "--report",
        "junit",
        "--report-junit-path",
        str(report),
        "--no-color",
    ]
    # cwd: schemathesis keeps a cache folder where it runs; not in the checkout.
    completed = subprocess.run(command, capture_output=True, text=True, timeout=MAX_TIME_SECONDS + 60, cwd=tmp_path)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-6000:]
    # It did exercise the API (the summary lists the operations it tested).
    assert "operations" in output.lower(), output[-2000:]
    print(json.dumps({"schemathesis_tail": output[-800:]}))
