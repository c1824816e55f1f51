"""Whole-context validation: size, schema, capture time. Pure; no database.

Order matters for cost and for the answer the client gets: the size check
runs first (a 5 MB body is refused before the schema walks it), then the
schema (naming the field), then the clock.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from .canonical import canonical_json, sha256_hex
from .errors import (
    ContextFromFuture,
    ContextSizeLimitExceeded,
    ContextValidationError,
    StaleContextAge,
)
from .schema import validate_context_schema

MAX_CONTEXT_BYTES = 5120
CONTEXT_TTL_SECONDS = 300
MAX_FUTURE_SKEW_SECONDS = 30


@dataclass(frozen=True)
class ValidatedContext:
    data: dict[str, Any]
    canonical: bytes
    size: int
    sha256: str
    captured_at: dt.datetime
    version: int


def context_size(context: Any) -> tuple[bytes, int]:
    try:
        encoded = canonical_json(context)
    except UnicodeEncodeError as exc:  # a lone surrogate ("\\ud800" in the request JSON)
        path = _text_path(context, _has_surrogate) or "(root)"
        raise ContextValidationError([{"field": path, "message": "is not valid Unicode text"}]) from exc
    except (TypeError, ValueError) as exc:  # NaN, Infinity, non-JSON values
        raise ContextValidationError([{"field": "(root)", "message": "is not plain JSON"}]) from exc
    return encoded, len(encoded)


def check_size(context: Any, *, max_bytes: int = MAX_CONTEXT_BYTES) -> tuple[bytes, int]:
    encoded, size = context_size(context)
    if size > max_bytes:
        raise ContextSizeLimitExceeded(
            f"The UI context is {size} bytes; the limit is {max_bytes} bytes.",
            details={"size": size, "limit": max_bytes},
        )
    return encoded, size


def _has_nul(text: str) -> bool:
    return "\x00" in text


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _printable(path: str) -> str:
    return "".join(f"\\u{ord(ch):04x}" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in path)


def _text_path(value: Any, bad, path: str = "") -> str | None:
    """The first member whose key or string value is ``bad`` (a path safe to echo)."""
    if isinstance(value, str):
        return (path or "(root)") if bad(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if bad(str(key)):
                return _printable(here)
            found = _text_path(item, bad, here)
            if found:
                return _printable(found)
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _text_path(item, bad, f"{path}[{index}]")
            if found:
                return found
    return None


def check_no_nul(context: Any, encoded: bytes) -> None:
    # The canonical JSON escapes U+0000 as \u0000: one cheap scan before walking the context.
    if b"\\u0000" not in encoded:
        return
    path = _text_path(context, _has_nul)
    if path:
        raise ContextValidationError([{"field": path, "message": "must not contain the NUL character (U+0000)"}])


def parse_captured_at(context: dict[str, Any]) -> dt.datetime:
    field = "capturedAt" if "capturedAt" in context else "timestamp"
    raw = context[field]
    try:
        value = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise ContextValidationError([{"field": field, "message": "is not an ISO 8601 date-time"}]) from None
    if value.tzinfo is None:
        raise ContextValidationError([{"field": field, "message": "must include a time zone (e.g. Z)"}])
    return value


def check_age(
    captured_at: dt.datetime,
    *,
    now: dt.datetime,
    ttl_seconds: int = CONTEXT_TTL_SECONDS,
    max_future_skew_seconds: int = MAX_FUTURE_SKEW_SECONDS,
) -> None:
    age = (now - captured_at).total_seconds()
    if age > ttl_seconds:
        raise StaleContextAge(
            f"The UI context was captured {int(age)} s ago; the limit is {ttl_seconds} s.",
            details={"ageSeconds": int(age), "ttlSeconds": ttl_seconds},
        )
    if -age > max_future_skew_seconds:
        raise ContextFromFuture(
            f"The UI context capture time is {int(-age)} s in the future.",
            details={"aheadSeconds": int(-age), "maxSkewSeconds": max_future_skew_seconds},
        )


def validate_context(
    context: Any,
    *,
    now: dt.datetime,
    max_bytes: int = MAX_CONTEXT_BYTES,
    ttl_seconds: int = CONTEXT_TTL_SECONDS,
    max_future_skew_seconds: int = MAX_FUTURE_SKEW_SECONDS,
) -> ValidatedContext:
    """Validate a whole AgentContext; raise a :class:`ContextError` subclass."""
    encoded, size = check_size(context, max_bytes=max_bytes)
    validate_context_schema(context)
    check_no_nul(context, encoded)
    captured_at = parse_captured_at(context)
    check_age(captured_at, now=now, ttl_seconds=ttl_seconds, max_future_skew_seconds=max_future_skew_seconds)
    return ValidatedContext(
        data=context,
        canonical=encoded,
        size=size,
        sha256=sha256_hex(encoded),
        captured_at=captured_at,
        version=context["contextVersion"],
    )


DELTA_KEYS = frozenset({"baseSnapshotId", "delta"})


def is_delta_payload(payload: Any) -> bool:
    return isinstance(payload, dict) and "baseSnapshotId" in payload


def check_delta_payload(
    payload: dict[str, Any], *, max_bytes: int = MAX_CONTEXT_BYTES
) -> tuple[int | str, dict[str, Any]]:
    """``{baseSnapshotId, delta}`` well-formed: returns (base id, delta)."""
    extra = sorted(set(payload) - DELTA_KEYS)
    if extra:
        raise ContextValidationError(
            [{"field": extra[0], "message": "unknown field (a delta carries only baseSnapshotId and delta)"}]
        )
    base_id = payload.get("baseSnapshotId")
    valid_int = isinstance(base_id, int) and not isinstance(base_id, bool) and base_id > 0
    valid_str = isinstance(base_id, str) and 0 < len(base_id) <= 64
    if not (valid_int or valid_str):
        raise ContextValidationError([{"field": "baseSnapshotId", "message": "must be a snapshot id"}])
    delta = payload.get("delta")
    if not isinstance(delta, dict):
        raise ContextValidationError([{"field": "delta", "message": "must be a JSON Merge Patch object"}])
    check_size(delta, max_bytes=max_bytes)
    return base_id, delta
