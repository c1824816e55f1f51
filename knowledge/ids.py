"""Package IDs and aliases: normalization and resolution (pure, no database).

"preços", "Pricing rules", "pricing-rules" and "PRICING.RULES" all normalize to
one key, so curators and agents can name a package the way they say it.
"""

from collections.abc import Iterable, Mapping

from common.identifiers import normalize_package_key, requested_package_key


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
