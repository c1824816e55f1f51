"""Thompson sampling over RAG strategies per query pattern (the seed's learned policy).

Each strategy of a route is an arm. Its prior is the deterministic weight the route would
use without learning (the pattern's matrix row shifted by the active skills' biases):
``Beta(c·w, c·(1 − w))`` with ``c`` the prior strength, so the prior mean *is* the
deterministic weight. Feedback on a reply credits the strategies by the share of the
delivered chunks each brought (up → successes, down → failures). A route samples one θ
per strategy from its posterior ``Beta(c·w + S, c·(1 − w) + F)``, normalizes, and keeps
every weight within the curator's bounds (``w ± max_shift``; an excluded strategy stays
at zero). Without any feedback for the pattern the weights are exactly the deterministic
ones: the learned policy starts where Phase 0 is.

The random generator is seeded by the caller (tenant, policy version, pattern, message),
so a route can be replayed: same message, same policy version → same weights.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

ROUND = 4


def route_seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def has_feedback(counts: Mapping[str, Sequence[float]] | None, strategies: Sequence[str]) -> bool:
    return bool(counts) and any(sum(counts.get(s, (0.0, 0.0))) > 0 for s in strategies)


def bounds_for(prior: Mapping[str, float], max_shift: float) -> dict[str, tuple[float, float]]:
    return {s: (max(0.0, w - max_shift), min(1.0, w + max_shift)) for s, w in prior.items()}


def project_bounded(raw: Mapping[str, float], bounds: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """Weights summing to 1 with each inside its [lo, hi]: clamp, then share what is left
    among the unclamped in proportion to their raw weight (water filling, bounded loop)."""
    fixed: dict[str, float] = {}
    free = dict(raw)
    for _ in range(len(raw) + 1):
        mass = 1.0 - sum(fixed.values())
        total = sum(free.values())
        scaled = {s: (mass * v / total if total > 0 else mass / max(len(free), 1)) for s, v in free.items()}
        violated = {s: min(max(v, bounds[s][0]), bounds[s][1]) for s, v in scaled.items() if not bounds[s][0] <= v <= bounds[s][1]}
        if not violated:
            return {**fixed, **scaled}
        fixed.update(violated)
        for s in violated:
            free.pop(s)
        if not free:
            break
    return fixed


def _ordered(weights: Mapping[str, float], canonical: str, order: Sequence[str]) -> dict[str, float]:
    items = [(s, round(w, ROUND)) for s, w in weights.items() if round(w, ROUND) > 0]
    idx = {s: i for i, s in enumerate(order)}
    return dict(sorted(items, key=lambda kv: (-kv[1], kv[0] != canonical, idx.get(kv[0], 99))))


def thompson_weights(
    prior: Mapping[str, float],
    counts: Mapping[str, Sequence[float]] | None,
    *,
    canonical: str,
    order: Sequence[str],
    prior_strength: float,
    max_shift: float,
    seed: int,
) -> dict[str, float]:
    arms = [s for s, w in prior.items() if w > 0]
    if not has_feedback(counts, arms):
        return dict(prior)
    rng = np.random.default_rng(seed)
    theta = {}
    for s in arms:
        w = prior[s]
        successes, failures = (counts or {}).get(s, (0.0, 0.0))
        theta[s] = float(rng.beta(prior_strength * w + successes, prior_strength * (1.0 - w) + failures))
    return _ordered(project_bounded(theta, bounds_for({s: prior[s] for s in arms}, max_shift)), canonical, order)


def posterior_means(
    prior: Mapping[str, float], counts: Mapping[str, Sequence[float]] | None, *, prior_strength: float, max_shift: float
) -> dict[str, float]:
    """The policy's expected weights (what the admin shows; no sampling)."""
    arms = [s for s, w in prior.items() if w > 0]
    if not has_feedback(counts, arms):
        return dict(prior)
    means = {}
    for s in arms:
        successes, failures = (counts or {}).get(s, (0.0, 0.0))
        means[s] = (prior_strength * prior[s] + successes) / (prior_strength + successes + failures)
    bounded = project_bounded(means, bounds_for({s: prior[s] for s in arms}, max_shift))
    return {s: round(v, ROUND) for s, v in bounded.items()}


def credit(
    state: Mapping[str, Mapping[str, Sequence[float]]], pattern: str, shares: Mapping[str, float], rating: str, sign: int = 1
) -> dict:
    """A new state with one rating credited (sign=-1 takes a previous rating back)."""
    out = {p: {s: list(v) for s, v in arms.items()} for p, arms in state.items()}
    arms = out.setdefault(pattern, {})
    slot = 0 if rating == "up" else 1
    for strategy, share in shares.items():
        if share <= 0:
            continue
        counts = arms.setdefault(strategy, [0.0, 0.0])
        counts[slot] = round(max(0.0, counts[slot] + sign * float(share)), 6)
    return out
