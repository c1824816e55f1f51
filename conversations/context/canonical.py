"""Canonical JSON: the bytes the size limit, the hash and the snapshot refer to."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8 (not ``\\u`` escapes).

    Its length equals ``new TextEncoder().encode(JSON.stringify(ctx)).length`` in
    the browser for the same data, so client and server agree on the 5 KB limit.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
