"""Sorting and distinct values for the index build: stable ordering of non-negative integer keys by
16-bit radix passes, and distinct values (with their counts) without numpy's masked-array detour.

numpy sorts 16-bit keys stably by radix (linear time) and wider ones by
timsort or introsort: for keys below 2**48, one to three radix passes over
16-bit slices (lowest first, each stable) give exactly the permutation
``np.argsort(keys, kind="stable")`` gives, several times faster.
"""

from __future__ import annotations

import numpy as np

_PASS_BITS = 16
_MAX_PASSES = 3


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for an array of non-negative integers."""
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    top = int(keys.max())
    if int(keys.min()) < 0 or top >> (_PASS_BITS * _MAX_PASSES):
        return np.argsort(keys, kind="stable")
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = _PASS_BITS
    while top >> shift:
        order = order[np.argsort(((keys[order] >> shift) & 0xFFFF).astype(np.uint16), kind="stable")]
        shift += _PASS_BITS
    return order


def sorted_unique_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_counts=True)`` for integer keys, without its masked-array detour.

    Sorted values, not an order: equal keys are indistinguishable, so no stable permutation is needed.
    Which is faster depends on the CPU: where numpy's int64 sort is vectorised (part 8's host) ``np.sort``
    ran 2-6x faster than ``stable_order``'s radix passes and gather over a build batch's 0.2-1 M keys;
    on a host where it is not, it is ~1.5x slower (docs/retrieval.md, "Build at 100k", parts 8 and 9).
    The segment build runs it on its placing thread, beside the next batch's analysis."""
    if keys.size == 0:
        return keys.copy(), np.zeros(0, dtype=np.int64)
    ordered = np.sort(keys)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return ordered[starts], np.diff(np.r_[starts, ordered.size])


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` without its masked-array check: a plain ``np.unique`` asks
    ``np.ma.is_masked``, whose lazy import of ``numpy.ma`` cost ~14 ms of a process's first edit (delta)."""
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if ordered.size else ordered
