"""JSON Merge Patch (RFC 7396): ``delta`` applied to a base context.

Eight lines of the RFC's pseudo-code; a dependency would be larger than this.
"""

from __future__ import annotations

import copy
from typing import Any


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """Return ``target`` patched by ``patch``; neither argument is modified.

    Objects merge recursively, ``null`` removes a member, anything else
    (arrays included) replaces the target value whole.
    """
    return _merge(copy.deepcopy(target), patch)


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge(target.get(key), value)
    return target
