"""The webhook client: one signed POST to the host application, with a timeout.

The host receives::

    POST <webhook_url>
    Content-Type: application/json
    Idempotency-Key: <action id>             (the same on every retry of one action)
    X-Contexto-Timestamp: <unix seconds>
    X-Contexto-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>

    {"actionId", "capability", "tenant", "entity": {"type", "id"}, "target", "parameters": {"value", "unit"}}

and answers 2xx with ``{"value": <the field's value now>}``: that value is what
verification compares. Never called inside a database transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

MAX_RESPONSE_BYTES = 64 * 1024  # the host answers a value, not a document
SIGNATURE_HEADER = "X-Contexto-Signature"
TIMESTAMP_HEADER = "X-Contexto-Timestamp"


@dataclass(frozen=True)
class WebhookOutcome:
    ok: bool
    error: str = ""  # timeout | connection | http_status | invalid_response | not_configured
    status_code: int | None = None
    value: Any = None
    has_value: bool = False
    duration_ms: int = 0


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signature_valid(secret: str, timestamp: str, body: bytes, signature: str) -> bool:
    """For hosts (and tests): constant-time check of a request's signature."""
    return hmac.compare_digest(sign(secret, timestamp, body), signature or "")


def webhook_call(*, url: str, secret: str, payload: dict, idempotency_key: str, timeout: float) -> WebhookOutcome:
    started = time.monotonic()

    def done(**kwargs) -> WebhookOutcome:
        return WebhookOutcome(duration_ms=int((time.monotonic() - started) * 1000), **kwargs)

    if not secret:
        return done(ok=False, error="not_configured")
    body = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    timestamp = str(int(time.time()))
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Idempotency-Key": idempotency_key,
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: sign(secret, timestamp, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status = response.status
            raw = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        return done(ok=False, error="http_status", status_code=exc.code)
    except TimeoutError:
        return done(ok=False, error="timeout")
    except urllib.error.URLError as exc:
        reason = exc.reason
        return done(ok=False, error="timeout" if isinstance(reason, (TimeoutError, socket.timeout)) else "connection")
    except (OSError, ValueError):
        return done(ok=False, error="connection")
    if len(raw) > MAX_RESPONSE_BYTES:
        return done(ok=False, error="invalid_response", status_code=status)
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError):
        return done(ok=False, error="invalid_response", status_code=status)
    has_value = isinstance(data, dict) and "value" in data
    return done(ok=True, status_code=status, value=data.get("value") if has_value else None, has_value=has_value)
