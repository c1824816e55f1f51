"""A small learned re-ranker over the router's own signals (logistic regression, numpy only).

Features of one candidate entry of one part, all scale-free so a model
trained on two catalogs can be applied to a third:

0. fused score ÷ the part's best        7. has a BM25 hit
1. 1 / (1 + fused rank)                 8. has a context hit (ID, focus, parent, page)
2. coverage of the question's IDF       9. reached only through a wiki link
3. … in the ID, aliases and title      10. is a procedure
4. … in the keywords                   11. is a rule
5. … in the summary                    12. share of the question's IDF the catalog never saw
6. has a keyword hit                   13. the part's best coverage

``fit`` trains on labeled candidates; ``apply`` gives each candidate a
probability of being an expected entry. Measured by leave-one-catalog-out
(knowledge/evaluation/tune.py --rerank); see docs/retrieval.md for whether
it is on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

N_FEATURES = 14
CANDIDATES = 10


def fit(x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, steps: int = 3000, lr: float = 0.5) -> tuple[float, ...]:
    """Weights (bias last) of an L2-regularized logistic regression, by gradient descent (deterministic)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    # Balance the classes: few candidates are expected.
    pos = max(y.sum(), 1.0)
    neg = max(len(y) - y.sum(), 1.0)
    sample = np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ ((p - y) * sample) / len(y)
        grad[:-1] += l2 * w[:-1] / len(y)
        w -= lr * grad
    return tuple(float(v) for v in w)


def apply(weights: Sequence[float], x: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return 1 / (1 + np.exp(-(np.asarray(x, dtype=float) @ w[:-1] + w[-1])))


def candidate_features(index, slots, fused, why, coverage) -> dict[int, np.ndarray]:
    """The features above for a part's best ``CANDIDATES`` fused entries (``coverage``: signals.coverage)."""
    order = sorted(fused, key=lambda i: (-fused[i], i))[:CANDIDATES]
    docs = np.asarray(order, dtype=np.int64)
    covered = coverage(index, slots, docs)[0] if slots else np.zeros(len(docs))
    total = sum(s.denom for s in slots) or 1.0
    unknown = sum(s.denom for s in slots if not s.terms) / total
    best_fused = fused[order[0]] or 1.0
    fields = index.field_terms()
    out: dict[int, np.ndarray] = {}
    for rank, (i, cov) in enumerate(zip(order, covered)):
        signals = {n[0] for n in why.get(i, ())}  # reasons are (signal, rank, detail) tuples
        per_field = [_field_share(index, slots, fields[i][name]) / total for name in ("name", "keywords", "summary")]
        kind = index.entries[i].kind
        out[i] = np.array(
            [
                fused[i] / best_fused,
                1.0 / (1 + rank),
                float(cov),
                *per_field,
                float("keyword" in signals),
                float("bm25" in signals),
                float(bool(signals & {"id", "semantic", "semantic_parent", "semantic_page"})),
                float(signals == {"wikilink"}),
                float(kind == "procedure"),
                float(kind == "rule"),
                unknown,
                float(covered.max()) if len(covered) else 0.0,
            ]
        )
    return out


def _field_share(index, slots, terms: set[str]) -> float:
    return sum(max((s.weight_of(t) * index.bm25.idf(t) for t in s.terms if t in terms), default=0.0) for s in slots)
