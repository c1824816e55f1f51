"""Thompson sampling over RAG strategies per query pattern (the seed's learned policy).

Each strategy of a route is an arm with a success rate θ (how often replies it brought
evidence to were rated up), prior ``Beta(c/2, c/2)`` with ``c`` the prior strength.
Feedback on a reply credits the strategies by the share of the delivered chunks each
brought (up → successes, down → failures), and by how far the route's sampled weights
leaned towards or away from each (``lean``): the contrast that tells the arms apart. A route samples θ per strategy from its
posterior ``Beta(c/2 + S, c/2 + F)`` and weighs it against the deterministic weight the
route would use without learning (the pattern's matrix row shifted by the active skills'
biases): ``w'(s) ∝ w(s) · θ(s) / 0.5``, kept within the curator's bounds (``w ± max_shift``,
an excluded strategy stays at zero). The deterministic distribution is the prior: equal
rates leave it as it is, and without any feedback for the pattern the weights are exactly
the deterministic ones, so the learned policy starts where Phase 0 is.

The random generator is seeded by the caller (tenant, policy version, pattern, message),
so a route can be replayed: same message, same policy version → same weights.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

ROUND = 4
# each strategy's "success rate" starts neutral; the weights are the deterministic ones times
# rate / NEUTRAL_RATE, so equal rates leave the deterministic weights as they are
NEUTRAL_RATE = 0.5


def route_seed(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def has_feedback(counts: Mapping[str, Sequence[float]] | None, strategies: Sequence[str]) -> bool:
    return bool(counts) and any(sum(counts.get(s, (0.0, 0.0))) > 0 for s in strategies)


def bounds_for(prior: Mapping[str, float], max_shift: float) -> dict[str, tuple[float, float]]:
    return {s: (max(0.0, w - max_shift), min(1.0, w + max_shift)) for s, w in prior.items()}


def project_bounded(raw: Mapping[str, float], bounds: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """The weights closest to `raw` (normalized) that sum to 1 with each inside its [lo, hi]:
    ``w_s = clip(raw_s + τ, lo_s, hi_s)`` with the shift τ found by bisection (a bounded
    loop). Feasible whenever the prior lies inside the bounds, which it does by construction."""
    total = sum(raw.values())
    norm = {s: (v / total if total > 0 else 1.0 / len(raw)) for s, v in raw.items()}

    def mass(tau: float) -> float:
        return sum(min(max(norm[s] + tau, bounds[s][0]), bounds[s][1]) for s in norm)

    low, high = -2.0, 2.0
    for _ in range(60):
        mid = (low + high) / 2.0
        if mass(mid) < 1.0:
            low = mid
        else:
            high = mid
    tau = (low + high) / 2.0
    return {s: min(max(norm[s] + tau, bounds[s][0]), bounds[s][1]) for s in norm}


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
    raw = {}
    for s in arms:
        successes, failures = (counts or {}).get(s, (0.0, 0.0))
        theta = float(
            rng.beta(prior_strength * NEUTRAL_RATE + successes, prior_strength * (1 - NEUTRAL_RATE) + failures)
        )
        raw[s] = prior[s] * theta / NEUTRAL_RATE
    return _ordered(project_bounded(raw, bounds_for({s: prior[s] for s in arms}, max_shift)), canonical, order)


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
        rate = (prior_strength * NEUTRAL_RATE + successes) / (prior_strength + successes + failures)
        means[s] = prior[s] * rate / NEUTRAL_RATE
    bounded = project_bounded(means, bounds_for({s: prior[s] for s in arms}, max_shift))
    return {s: round(v, ROUND) for s, v in bounded.items()}


def lean(weights: Mapping[str, float], prior: Mapping[str, float], max_shift: float) -> dict[str, float]:
    """How far a route's weights leaned from the deterministic ones, per strategy, in units
    of the curator's bound (−1 … 1; 0 everywhere when it didn't lean or nothing may move)."""
    if max_shift <= 0:
        return {}
    return {
        s: max(-1.0, min(1.0, (float(weights.get(s, 0.0)) - float(prior.get(s, 0.0))) / max_shift))
        for s in sorted(set(weights) | set(prior))
    }


def credit(
    state: Mapping[str, Mapping[str, Sequence[float]]],
    pattern: str,
    shares: Mapping[str, float],
    rating: str,
    sign: int = 1,
    *,
    leaned: Mapping[str, float] | None = None,
) -> dict:
    """A new state with one rating credited (sign=-1 takes a previous rating back).

    Every strategy that brought evidence shares the rating by its share. That alone learns
    slowly: each arm's rate drifts towards the overall rate of up-votes. `leaned` (see
    ``lean``) adds the contrast Thompson sampling creates: a reply rated up credits
    successes to the strategies the route leaned towards and failures to those it leaned
    away from, by how far it leaned; a reply rated down the reverse."""
    out = {p: {s: list(v) for s, v in arms.items()} for p, arms in state.items()}
    arms = out.setdefault(pattern, {})
    slot = 0 if rating == "up" else 1

    def add(strategy: str, index: int, amount: float) -> None:
        counts = arms.setdefault(strategy, [0.0, 0.0])
        counts[index] = round(max(0.0, counts[index] + sign * amount), 6)

    for strategy, share in shares.items():
        if share > 0:
            add(strategy, slot, float(share))
    for strategy, amount in (leaned or {}).items():
        if amount:
            add(strategy, slot if amount > 0 else 1 - slot, abs(float(amount)))
    return out
