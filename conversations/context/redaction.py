"""Masking of personal data before a context is stored or shown to a model.

Two passes over the context, done once on the way in:

- a member whose *key* names personal data (``cpf``, ``email``, ``salario``,
  ``accessToken`` …) loses its whole value;
- any other string has the *values* that look like personal data (CPF, CNPJ,
  e-mail, phone) replaced in place.

Identifier members (``semanticId``, ``entityId``, ``capturedAt``, route
params naming an entity …) are not masked: authorization, deltas and record-change detection compare
them, and a long numeric id would otherwise be mistaken for a CPF. Apps must
not use personal data as entity ids (docs/context-engine.md).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from common.text import fold_lower

MASK = "[REDACTED]"

DEFAULT_SENSITIVE_KEYS: tuple[str, ...] = (
    "cpf",
    "cnpj",
    "rg",
    "pis",
    "nis",
    "ctps",
    "passport",
    "passaporte",
    "email",
    "mail",
    "telefone",
    "phone",
    "celular",
    "mobile",
    "whatsapp",
    "endereco",
    "address",
    "cep",
    "salario",
    "salary",
    "remuneracao",
    "password",
    "senha",
    "secret",
    "token",
    "apikey",
    "authorization",
    "cookie",
    "cartao",
    "creditcard",
    "iban",
    "nascimento",
    "birthdate",
)

# Members that carry identifiers or enums, never free text: skipped by the value scan.
IDENTIFIER_KEYS = frozenset(
    {
        "semanticId",
        "id",
        "entityId",
        "entityType",
        "activeTabId",
        "capturedAt",
        "timestamp",
        "at",
        "topVisibleElement",
        "bottomVisibleElement",
        "visibleSemanticIds",
        "parentIds",
        "type",
        "visibility",
        "environment",
        "applicationId",
        "applicationVersion",
        "contextVersion",
        "index",
        "routeName",
    }
)

# Route params that name an entity (``id``, ``<type>Id``, ``<type>_id``): identifiers the
# authorizer checks again when a delta is applied to the stored (masked) base, so a
# masked one (an 11-digit id looks like a CPF) would turn a legitimate delta into a 403.
ENTITY_PARAM = re.compile(r"^(?:id|(?P<type>[A-Za-z][A-Za-z0-9]*?)(?:Id|_id))$")
ENTITY_PARAMS_PATH = "navigation.params"

_SENSITIVE_VALUE = re.compile(
    "|".join(
        (
            r"(?P<email>[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,})",
            r"(?P<cnpj>(?<!\d)\d{2}\.?\d{3}\.?\d{3}/?\d{4}-?\d{2}(?!\d))",
            r"(?P<cpf>(?<!\d)\d{3}\.?\d{3}\.?\d{3}-?\d{2}(?!\d))",
            # Phones with a country code, a DDD in parentheses or a separated DDD.
            r"(?P<phone>(?<![\w.])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,3}\)\s?|\d{2,3}[\s.-])9?\d{4}[\s.-]?\d{4}(?!\w)"
            r"|\+\d{1,3}[\s.-]?\d{3}[\s.-]\d{3}[\s.-]\d{4}(?!\w))",
        )
    )
)

_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Redactor:
    sensitive_keys: frozenset[str]
    _cache: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_keys(cls, keys: Iterable[str] = DEFAULT_SENSITIVE_KEYS) -> "Redactor":
        return cls(frozenset(fold_lower(k).replace("-", "").replace("_", "") for k in keys))

    def is_sensitive_key(self, key: str) -> bool:
        """``cpf``, ``userEmail``, ``e-mail``, ``Endereço residencial`` → True."""
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        folded = fold_lower(_CAMEL.sub("_", key))
        words = [w for w in _WORD_SPLIT.split(folded) if w]
        joined = "".join(words)
        result = joined in self.sensitive_keys or any(w in self.sensitive_keys for w in words)
        if len(self._cache) < 4096:
            self._cache[key] = result
        return result

    def redact(self, context: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Return a masked copy and the dotted paths that were masked."""
        paths: list[str] = []
        redacted = self._walk(context, "", paths)
        focus = redacted.get("focus") if isinstance(redacted, dict) else None
        if isinstance(focus, dict) and "value" in focus and focus["value"] not in (None, MASK):
            # A focused field that is itself personal data (``employee.cpf``, label
            # "Telefone"): its value is masked whatever it looks like.
            last = str(focus.get("semanticId", "")).rsplit(".", 1)[-1]
            if self.is_sensitive_key(last) or self.is_sensitive_key(str(focus.get("label", ""))):
                focus["value"] = MASK
                paths.append("focus.value")
        return redacted, paths

    def _walk(self, value: Any, path: str, paths: list[str]) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                child = f"{path}.{key}" if path else key
                if key in IDENTIFIER_KEYS or (path == ENTITY_PARAMS_PATH and ENTITY_PARAM.match(key)):
                    out[key] = item
                elif self.is_sensitive_key(key) and item is not None:
                    out[key] = MASK
                    paths.append(child)
                else:
                    out[key] = self._walk(item, child, paths)
            return out
        if isinstance(value, list):
            return [self._walk(item, f"{path}[{i}]", paths) for i, item in enumerate(value)]
        if isinstance(value, str):
            masked, count = _SENSITIVE_VALUE.subn(MASK, value)
            if count:
                paths.append(path)
            return masked
        return value


def contains_mask(value: Any) -> bool:
    return isinstance(value, str) and MASK in value


@functools.lru_cache(maxsize=8)
def redactor_for(sensitive_keys: tuple[str, ...] = DEFAULT_SENSITIVE_KEYS) -> Redactor:
    """One redactor (and its key cache) per configured key list."""
    return Redactor.from_keys(sensitive_keys)


def redact_context(
    context: dict[str, Any], sensitive_keys: Iterable[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    keys = DEFAULT_SENSITIVE_KEYS if sensitive_keys is None else tuple(sensitive_keys)
    return redactor_for(keys).redact(context)
