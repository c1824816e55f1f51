"""A small learned re-ranker over the router's own signals (logistic regression, numpy only).

Features of one candidate entry of one part (its best ``CANDIDATES`` fused
entries), all scale-free so a model trained on some catalogs can be applied to
another:

 0. fused score ÷ the part's best          13. the part's best coverage
 1. 1 / (1 + fused rank)                   14. BM25 score relative to the part's best (0: no hit)
 2. coverage of the question's IDF         15. 1 / BM25 rank                (0: no hit)
 3. … in the ID, aliases and title         16. 1 / keyword rank             (0: no hit)
 4. … in the keywords                      17. the question was embedded (dense gate open)
 5. … in the summary                       18. dense lift: cosine − the catalog's mean cosine
 6. has a keyword hit                      19. … ÷ the part's best lift
 7. has a BM25 hit                         20. 1 / rank by cosine over the whole catalog
 8. has a context hit (ID, focus, parent)  21. the part's best lift (is anything close at all?)
 9. reached only through a wiki link       22. eligible for full by the hand-set rules
10. is a procedure                         23. signals (keyword, BM25, dense) that rank it first
11. is a rule                              24. BM25's and the dense signal's firsts agree
12. share of the question's IDF the catalog never saw

``fit`` trains on labeled candidates; ``apply`` gives each candidate a
probability of being an expected entry (``fit_listwise``: a listwise score);
``rerank_part`` reorders a part's candidates by it and decides which may arrive
in full. Measured by leave-one-catalog-out over the dev splits (``python -m
knowledge.evaluation.tune --rerank``): no consistent held-out gain, so it is
off (``RouterConfig.rerank_weights`` None); docs/retrieval.md has the figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

N_FEATURES = 25
CANDIDATES = 10
# Evidence a re-ranker never overrules: the user named the entry, the UI focus is on it, or a
# curator fetched it after seeing it listed for this question.
CONTEXT_SIGNALS = frozenset({"id", "semantic", "semantic_parent", "semantic_page"})
KEEP_SIGNALS = CONTEXT_SIGNALS | {"feedback"}
# Re-ranked candidates score this plus their model score: above any fused score (Σ weights / (k + 1)).
RERANKED_BASE = 10.0


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


def fit_listwise(
    x: np.ndarray, y: np.ndarray, starts: np.ndarray, *, l2: float = 1.0, steps: int = 3000, lr: float = 0.5
) -> tuple[float, ...]:
    """Weights (bias last, always 0) of a listwise softmax model: each part's expected candidates first.

    ``starts``: the first row of each part (rows of a part are contiguous). Loss per part with an
    expected candidate: −log Σ_expected softmax(x·w) over the part's candidates (ListNet with a
    uniform target over the expected ones); parts without one carry no ranking signal.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    starts = np.asarray(starts, dtype=np.int64)
    group = np.zeros(len(x), dtype=np.int64)
    group[starts[1:]] = 1
    group = np.cumsum(group)
    positives = np.add.reduceat(y, starts)
    sizes = np.diff(np.append(starts, len(x)))
    useful = (positives > 0) & (sizes > 1)
    rows = useful[group]
    target = np.where(rows, y / np.maximum(positives, 1.0)[group], 0.0)
    n = max(int(useful.sum()), 1)
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        s = x @ w
        s = s - np.maximum.reduceat(s, starts)[group]
        e = np.exp(s)
        p = e / np.add.reduceat(e, starts)[group]
        grad = x.T @ ((p - target) * rows) / n + l2 * w / n
        w -= lr * grad
    return (*(float(v) for v in w), 0.0)


def apply(weights: Sequence[float], x: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return 1 / (1 + np.exp(-(np.asarray(x, dtype=float) @ w[:-1] + w[-1])))


def candidate_features(index, slots, fused, signals, coverage) -> dict[int, np.ndarray]:
    """The features above for a part's best ``CANDIDATES`` fused entries (``coverage``: signals.coverage)."""
    order = sorted(fused, key=lambda i: (-fused[i], i))[:CANDIDATES]
    docs = np.asarray(order, dtype=np.int64)
    covered = coverage(index, slots, docs)[0] if slots else np.zeros(len(docs))
    total = sum(s.denom for s in slots) or 1.0
    unknown = sum(s.denom for s in slots if not s.terms) / total
    best_fused = fused[order[0]] or 1.0
    fields = index.field_terms()
    why, rankings = signals.why, signals.rankings
    rank_in = {name: {i: r for r, i in enumerate(rankings.get(name, ()), 1)} for name in ("bm25", "keyword", "dense")}
    firsts = {name: ranked[0] for name, ranked in rankings.items() if ranked and name in ("bm25", "keyword", "dense")}
    dense_sims = signals.dense_sims
    if dense_sims is not None:
        sims, mean = dense_sims
        lifts = sims - mean
        best_lift = float(lifts.max()) if len(lifts) else 0.0
    else:
        lifts, best_lift = None, 0.0
    agree = float("bm25" in firsts and firsts.get("bm25") == firsts.get("dense"))
    out: dict[int, np.ndarray] = {}
    for rank, (i, cov) in enumerate(zip(order, covered)):
        names = {n[0] for n in why.get(i, ())}  # reasons are (signal, rank, detail) tuples
        per_field = [_field_share(index, slots, fields[i][name]) / total for name in ("name", "keywords", "summary")]
        kind = index.entries[i].kind
        if lifts is not None:
            lift = float(lifts[i])
            dense = [
                1.0,
                lift,
                lift / best_lift if best_lift > 0 else 0.0,
                1.0 / (1 + int((lifts > lift).sum())),
                best_lift,
            ]
        else:
            dense = [0.0, 0.0, 0.0, 0.0, 0.0]
        bm25_rank = rank_in["bm25"].get(i)
        kw_rank = rank_in["keyword"].get(i)
        out[i] = np.array(
            [
                fused[i] / best_fused,
                1.0 / (1 + rank),
                float(cov),
                *per_field,
                float("keyword" in names),
                float("bm25" in names),
                float(bool(names & CONTEXT_SIGNALS)),
                float(names == {"wikilink"}),
                float(kind == "procedure"),
                float(kind == "rule"),
                unknown,
                float(covered.max()) if len(covered) else 0.0,
                signals.bm25_relative.get(i, 0.0) if bm25_rank else 0.0,
                1.0 / bm25_rank if bm25_rank else 0.0,
                1.0 / kw_rank if kw_rank else 0.0,
                *dense,
                float(i in signals.eligible),
                float(sum(first == i for first in firsts.values())),
                agree,
            ]
        )
    return out


def rerank_part(
    fused: dict[int, float],
    eligible: set[int],
    why: Mapping[int, list],
    features: Mapping[int, np.ndarray],
    weights: Sequence[float],
    full_probability: float,
    entries: Sequence,
    *,
    veto_probability: float = 0.0,
    reorder: bool = True,
    full_weights: Sequence[float] | None = None,
    first_probability: float = 1.1,
) -> None:
    """Reorder a part's best candidates by the model's probability and decide which may arrive in full.

    ``reorder``: among the candidates, the model's order (below them, the fused order). A candidate
    becomes eligible for full when its probability is at least ``full_probability`` (never a
    procedure), and loses the hand-set rules' eligibility when it is below ``veto_probability``:
    the abstention rule (an out-of-domain question whose words or vector merely brush an entry
    gets nothing in full). What the context (named, in focus, its parent or page) or fetch
    feedback made eligible is never vetoed.
    """
    if not features:
        return
    order = list(features)
    x = np.vstack([features[i] for i in order])
    score = apply(weights, x)
    probability = score if full_weights is None else apply(full_weights, x)
    if reorder:
        # The model's score, on one scale for every part (a multi-part message's parts compare),
        # above whatever fused score a non-candidate has.
        for i, p in zip(order, score):
            fused[i] = RERANKED_BASE + float(p)
    first = max(order, key=lambda i: (fused[i], -i))
    for i, p in zip(order, probability):
        if i == first and i not in eligible and p >= first_probability and entries[i].kind != "procedure":
            why.setdefault(i, []).append(("rerank", 1, f"first, re-ranker probability {p:.2f}"))
            eligible.add(i)
        elif i in eligible:
            if p < veto_probability and not _kept(why, i):
                eligible.discard(i)
        elif p >= full_probability and entries[i].kind != "procedure":
            why.setdefault(i, []).append(("rerank", 1, f"re-ranker probability {p:.2f}"))
            eligible.add(i)


def _kept(why: Mapping[int, list], i: int) -> bool:
    return any(n[0] in KEEP_SIGNALS for n in why.get(i, ()))


def _field_share(index, slots, terms: set[str]) -> float:
    return sum(max((s.weight_of(t) * index.bm25.idf(t) for t in s.terms if t in terms), default=0.0) for s in slots)
