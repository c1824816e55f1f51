"""Nothing personal reaches a log line, on the error path either (a CPF in the payload as the probe)."""

import io
import logging

import pytest
from django.db import connection

from common.log_redaction import RedactingFilter, install_on_handlers

pytestmark = pytest.mark.django_db

CPF = "123.456.789-09"
NAME = "Ana Souza"


@pytest.fixture
def console():
    """The configured console handler (LOGGING), writing into a buffer for the test."""
    handler = next(h for h in logging.getLogger().handlers if any(isinstance(f, RedactingFilter) for f in h.filters))
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    yield buffer
    handler.setStream(previous)


@pytest.fixture
def unfiltered():
    """A plain handler beside it: proves the probe really puts the CPF into the records."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    # First in line: the redacting filter rewrites the record for every handler after it.
    logging.getLogger().handlers.insert(0, handler)
    yield buffer
    logging.getLogger().removeHandler(handler)


def test_a_driver_error_quoting_the_failing_row_logs_no_cpf(api_client, console, unfiltered):
    # A constraint the code does not know about: PostgreSQL's error quotes the whole failing row.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE explanations_result ADD CONSTRAINT reliab_probe CHECK (verdict NOT LIKE '%%-09%%')")
    response = api_client.post(
        "/api/v1/results", {"result_id": "r-1", "verdict": f"{NAME}, CPF {CPF}, aprovado"}, format="json"
    )
    assert response.status_code == 500
    assert response.json()["error"] == {
        "code": "INTERNAL_ERROR",
        "message": "An unexpected error occurred.",
        "details": {},
    }
    assert CPF in unfiltered.getvalue() or NAME in unfiltered.getvalue()  # the raw records do carry it
    logged = console.getvalue()
    assert "api.unhandled_error view=ResultCreateApi" in logged
    assert "psycopg.errors.CheckViolation: [message redacted]" in logged
    assert "django.db.utils.IntegrityError: [message redacted]" in logged
    assert 'File "' in logged  # the frames stay: the bug can still be found
    assert CPF not in logged and NAME not in logged and "Failing row" not in logged


def test_sql_debug_log_keeps_no_statement_or_parameters(console):
    logger = logging.getLogger("django.db.backends")
    level = logger.level
    logger.setLevel(logging.DEBUG)
    connection.force_debug_cursor = True
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT %s", [CPF])
    finally:
        connection.force_debug_cursor = False
        logger.setLevel(level)
    logged = console.getvalue()
    assert "db.query duration_ms=" in logged
    assert CPF not in logged and "SELECT" not in logged


def test_exceptions_passed_as_arguments_become_their_type():
    buffer = io.StringIO()
    logger = logging.getLogger("reliab.probe")
    handler = logging.StreamHandler(buffer)
    logger.addHandler(handler)
    install_on_handlers(logger)
    try:
        logger.warning("lookup failed: %s", ValueError(f"no user with cpf {CPF}"))
        logger.warning(KeyError(CPF))
    finally:
        logger.removeHandler(handler)
    assert buffer.getvalue() == "lookup failed: ValueError\nKeyError\n"
