"""Package IDs and aliases: normalization and resolution (pure, no database).

"preços", "Pricing rules", "pricing-rules" and "PRICING.RULES" all normalize to
one key, so curators and agents can name a package the way they say it.
"""

import re
from collections.abc import Iterable, Mapping

from common.text import fold

PACKAGE_ID_PATTERN = r"^[A-Z][A-Z0-9_]{1,63}$"
PACKAGE_ID_RE = re.compile(PACKAGE_ID_PATTERN)
PROCEDURE_PREFIX = "::"
_SEPARATORS_RE = re.compile(r"[\s\-./]+")
_INVALID_RE = re.compile(r"[^A-Z0-9_]")
_UNDERSCORES_RE = re.compile(r"_+")


def normalize_package_key(value: str) -> str:
    """Upper-case, accent-free, separators as single underscores."""
    key = fold(value.strip()).upper()
    key = _SEPARATORS_RE.sub("_", key)
    key = _INVALID_RE.sub("", key)
    return _UNDERSCORES_RE.sub("_", key).strip("_")


def requested_package_key(requested: object) -> str:
    """The normalized key of what an agent or user asked for ("::id" allowed); "" if nothing usable."""
    if not isinstance(requested, str):
        return ""
    value = requested.strip()
    if value.startswith(PROCEDURE_PREFIX):
        value = value[len(PROCEDURE_PREFIX) :]
    return normalize_package_key(value)


def resolve_package_id(
    requested: object,
    available_ids: Iterable[str],
    aliases: Mapping[str, str] | None = None,
) -> str | None:
    """Resolve an ID or alias among the currently available IDs only.

    `aliases` maps alias → package ID (keys in any form; they are normalized).
    A leading "::" (procedure invocation) is accepted and ignored. Returns the
    canonical package ID, or None when nothing available matches.
    """
    key = requested_package_key(requested)
    if not key:
        return None
    by_key = {normalize_package_key(pid): pid for pid in available_ids}
    if key in by_key:
        return by_key[key]
    if aliases:
        for alias, target in aliases.items():
            if normalize_package_key(alias) == key and target in by_key.values():
                return target
    return None
