"""The grammars of the names Contexto passes around, each defined once.

- Package IDs (``PRICING_RULES``) and how a requested name ("preços",
  "Pricing rules", "::PRICING_RULES") becomes the key it is looked up by.
- Semantic IDs of UI elements (``workPermit.components.validity``).
- Wiki-links between packages (``[[DELIVERY_TIMELINES]]``,
  ``[[DELIVERY_TIMELINES|prazos]]``, ``[[DELIVERY_TIMELINES#sanger]]``).

The admin's checks, the package files, the context schema, the router and the
offline provider all import these, so what one calls a link the others do too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from common.text import fold

# ---------------------------------------------------------------- package IDs

PACKAGE_ID_PATTERN = r"^[A-Z][A-Z0-9_]{1,63}$"
PACKAGE_ID_RE = re.compile(PACKAGE_ID_PATTERN)
PROCEDURE_PREFIX = "::"  # "::ID" invokes a procedure; the key is the ID's

_SEPARATORS_RE = re.compile(r"[\s\-./]+")
_INVALID_RE = re.compile(r"[^A-Z0-9_]")
_UNDERSCORES_RE = re.compile(r"_+")


def normalize_package_key(value: str) -> str:
    """Upper-case, accent-free, separators as single underscores: "Preços de kit" → "PRECOS_DE_KIT"."""
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


# --------------------------------------------------------------- semantic IDs

SEMANTIC_ID_MAX_LENGTH = 200
# Dotted segments; a segment may start with a digit ("table.2026"), the first one too,
# because front ends generate them from data.
SEMANTIC_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$"
SEMANTIC_ID_RE = re.compile(SEMANTIC_ID_PATTERN)


def is_semantic_id(value: object) -> bool:
    return isinstance(value, str) and len(value) <= SEMANTIC_ID_MAX_LENGTH and bool(SEMANTIC_ID_RE.match(value))


def semantic_id_parents(semantic_id: str) -> list[str]:
    """Dotted ancestors, nearest first: ``a.b.c`` → ``['a.b', 'a']``."""
    parts = semantic_id.split(".")
    return [".".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]


def focus_ancestors(focus: str | None, declared: Sequence[str] = ()) -> list[str]:
    """The ancestors a focus is read through, nearest first: its dotted parents, then any other
    declared parent; each once (case-insensitive), never the focus itself. The router's signals
    and the turn's focus-first order both climb this one chain."""
    seen = {focus.lower()} if focus else set()
    chain: list[str] = []
    for pid in [*(semantic_id_parents(focus) if focus else ()), *declared]:
        if pid and pid.lower() not in seen:
            seen.add(pid.lower())
            chain.append(pid)
    return chain


# ----------------------------------------------------------------- wiki-links

# [[TARGET]], [[TARGET|label]], [[TARGET#section]]: group 1 is the target as written.
WIKILINK_RE = re.compile(r"\[\[\s*([^\]|#]+?)\s*(?:[|#][^\]]*)?\]\]")


def wikilink_targets(text: str) -> list[str]:
    """Targets of the wiki-links in ``text``, in order of first appearance, as written."""
    return list(dict.fromkeys(match.strip() for match in WIKILINK_RE.findall(text or "")))
