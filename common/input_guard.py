"""Refuse text PostgreSQL cannot store before it reaches a query.

PostgreSQL text cannot hold a NUL character and UTF-8 cannot encode a lone
surrogate (JSON's "\\ud800" escape decodes to one): either one reaching the
driver raised an error deep inside a query and answered 500. Checked at the
edge instead (path, query string, every JSON key and value) and answered 400
naming the field. JSON nesting is bounded before the document is decoded, so
no later recursive step (canonical JSON, schema validation, copies) can hit
Python's recursion limit on a 2 KB body.
"""

import json
import re
from collections.abc import Iterator
from typing import Any

from common.exceptions import ApplicationError

# Deeper than any real payload (an AgentContext is about 5 levels); far below
# Python's recursion limit, so every recursive walk afterwards is safe.
MAX_JSON_DEPTH = 64

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class InvalidCharactersError(ApplicationError):
    """Rendered like every other field error (VALIDATION_ERROR, details.fields)."""

    code = "VALIDATION_ERROR"
    status_code = 400

    def __init__(self, field: str, problem: str):
        super().__init__(f"Invalid input: {field}: {problem}", details={"fields": {field: [problem]}})


class JsonTooDeepError(ApplicationError):
    code = "JSON_TOO_DEEP"
    status_code = 400
    message = "The JSON document is nested too deeply."


NUL_MESSAGE = "Null characters are not allowed."  # Django's own wording for form fields
SURROGATE_MESSAGE = "Lone surrogates are not allowed."


def text_problem(value: str) -> str | None:
    """Why this text cannot be stored, or None."""
    if "\x00" in value:
        return NUL_MESSAGE
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return SURROGATE_MESSAGE
    return None


def field_label(name: str) -> str:
    """A printable field name (the name itself may hold the bad character)."""
    return json.dumps(name)[1:-1]


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the raw document nests arrays/objects deeper than ``limit``.

    Scans the bytes (strings removed first, brackets inside them do not count)
    before any decoding, so the cost is linear and nothing recursive runs.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b"", raw)):
        if match.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        problem = text_problem(value)
        if problem:
            yield path or "(body)", problem
    elif isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{field_label(key)}" if path else field_label(key)
            problem = text_problem(key)
            if problem:
                yield child, problem.replace(" are not allowed", " are not allowed in keys")
            yield from _walk(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}]")


def check_json_value(value: Any, delegated: frozenset[str] = frozenset()) -> None:
    """Raise InvalidCharactersError naming the first field that cannot be stored.

    Top-level keys in ``delegated`` are skipped: a validator downstream checks
    them with its own, more precise errors (and its tests hold it to that).
    """
    if isinstance(value, dict) and delegated:
        value = {k: v for k, v in value.items() if k not in delegated}
    for path, problem in _walk(value, ""):
        raise InvalidCharactersError(path, problem)


def check_query_and_path(request) -> tuple[str, str] | None:
    """(field, problem) for the first path or query-string value that cannot be stored."""
    problem = text_problem(request.path)
    if problem:
        return "path", problem
    for key, values in request.GET.lists():
        problem = text_problem(key)
        if problem:
            return f"query.{field_label(key)}", problem.replace(" are not allowed", " are not allowed in names")
        for value in values:
            problem = text_problem(value)
            if problem:
                return f"query.{field_label(key)}", problem
    return None
