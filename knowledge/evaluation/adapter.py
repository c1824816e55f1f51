"""A linear question adapter learned across catalogs: measured by leave-one-catalog-out, not shipped.

    python -m knowledge.evaluation.adapter [--lam 0.1] [--scale 40] [--ood-weight 0] [--factors 1,0.75] [--raw]
        [--rank-only]

The idea (a query-side linear adapter over frozen sentence vectors): questions and the passages
that answer them are phrased differently ("como faço pra…" against a title and a summary), and a
linear map of the question's vector, learned on labeled questions, can move it towards its answer
whatever the catalog. The router's entry vectors stay as stored; only the question's is mapped,
``normalize(q @ A)`` with ``A = I + W``.

Training (``fit_adapter``): for each dev question with an expected entry, a softmax over the cosines
with its own catalog's entries (times ``scale``), cross-entropy against the expected entries, plus
``lam / 2 * ||W||^2`` pulling ``A`` towards the identity; optionally the catalog's out-of-domain dev
questions with a uniform target (weight ``ood_weight``: no entry is the answer). L-BFGS, numpy.

Leave one catalog out (the dev splits of ``tune.TUNING_INPUTS``, never a test split): for each
catalog, ``A`` is fitted on the other catalogs' dev questions and scored on the held-out one's, twice:
the vectors alone (each question's closest entry) and the whole router (``tune.run``, objective =
mean of hit@1, usable and out-of-domain precision). The adapter widens the cosines' spread, so the
router's lift thresholds are scaled by the spread ratio measured on the training catalogs' questions
against each other's entries (pairs no training question was fitted on; no label read) times each
``--factors`` value (1: matched spread; below 1: easier full bodies). ``--rank-only`` also routes with
the adapter picking and ordering the dense top k alone, every entry keeping its plain cosine.

Outcome and reading: docs/retrieval.md, "A question adapter learned across catalogs".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from knowledge.evaluation import tune  # noqa: E402
from knowledge.offline_catalog import load_package_folder  # noqa: E402
from knowledge.retrieval import RouterConfig  # noqa: E402


@dataclass
class Fold:
    """One catalog's training material: question vectors, entry vectors, target distributions, weights."""

    questions: np.ndarray  # (q, d) unit vectors
    entries: np.ndarray  # (n, d) unit vectors
    targets: np.ndarray  # (q, n), each row sums to 1
    weights: np.ndarray  # (q,)


def adapter_loss(x: np.ndarray, folds: list[Fold], lam: float, scale: float) -> tuple[float, np.ndarray]:
    """Mean weighted cross-entropy of the softmax over each question's catalog, plus ``lam/2 ||W||^2``;
    and its gradient with respect to ``W`` (``x`` is ``W`` flattened)."""
    dim = folds[0].questions.shape[1]
    w = x.reshape(dim, dim)
    total, grad, count = 0.0, np.zeros((dim, dim)), 0.0
    for f in folds:
        mapped = f.questions + f.questions @ w
        norms = np.linalg.norm(mapped, axis=1, keepdims=True)
        unit = mapped / norms
        scores = scale * unit @ f.entries.T
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        p /= p.sum(axis=1, keepdims=True)
        total += float(-(f.weights[:, None] * f.targets * np.log(p + 1e-12)).sum())
        count += float(f.weights.sum())
        d_unit = (scale * f.weights[:, None] * (p - f.targets)) @ f.entries
        d_mapped = (d_unit - unit * (d_unit * unit).sum(axis=1, keepdims=True)) / norms
        grad += f.questions.T @ d_mapped
    return total / count + 0.5 * lam * float(x @ x), (grad / count).ravel() + lam * x


def fit_adapter(folds: list[Fold], lam: float = 0.1, scale: float = 40.0, maxiter: int = 300) -> np.ndarray:
    """``A = I + W`` minimizing ``adapter_loss`` from ``W = 0``."""
    from scipy.optimize import minimize

    dim = folds[0].questions.shape[1]
    res = minimize(
        adapter_loss,
        np.zeros(dim * dim),
        args=(folds, lam, scale),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter},
    )
    return (np.eye(dim) + res.x.reshape(dim, dim)).astype(np.float32)


def adapt(vectors: np.ndarray, adapter: np.ndarray) -> np.ndarray:
    out = np.asarray(vectors, dtype=np.float32) @ adapter
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


def spread_ratio(adapter: np.ndarray, folds: list[Fold]) -> float:
    """Median, over ordered pairs of distinct catalogs, of how much wider the cosines of one catalog's
    questions with the other's entries spread once mapped (no label is read)."""
    ratios = [
        float(np.median((adapt(a.questions, adapter) @ b.entries.T).std(axis=1)))
        / float(np.median((a.questions @ b.entries.T).std(axis=1)))
        for a in folds
        for b in folds
        if a is not b
    ]
    return float(np.median(ratios))


def vectors_hit(fold: Fold, adapter: np.ndarray | None = None) -> int:
    """Questions whose closest entry (vectors alone) is one they expect."""
    q = fold.questions if adapter is None else adapt(fold.questions, adapter)
    top = (q @ fold.entries.T).argmax(axis=1)
    out_of_domain = fold.targets.max(axis=1) < 1.0 / fold.targets.shape[1] + 1e-9  # a uniform target
    hits = fold.targets[np.arange(len(top)), top] > 0
    return int((hits & ~out_of_domain).sum())


def figures(report) -> dict:
    """``tune.figures_of`` plus the counts behind the rates (answerable questions; out-of-domain ones)."""
    kinds = report.by_kind()
    out = tune.figures_of(report)
    out["counts"] = {
        "hit@1": kinds["all"]["hit@1"]["ok"],
        "usable": kinds["all"]["usable"]["ok"],
        "answerable": kinds["all"]["hit@1"]["n"],
        "ood_clean": kinds["all"].get("ood_precision", {}).get("ok", 0),
        "ood": kinds["all"].get("ood_precision", {}).get("n", 0),
        "paraphrase_hit@1": kinds.get("paraphrase", {}).get("hit@1", {}).get("ok", 0),
    }
    return out


def catalog_fold(name: str, ood_weight: float) -> tuple[Fold, list, list]:
    from common.text import retrieval_embeddings

    entries = load_package_folder(tune.TUNING_INPUTS[name][0])
    slot = {e.package_id: i for i, e in enumerate(entries)}
    rows = [r for r in tune.tuning_questions(name) if r["expected"] or ood_weight > 0]
    targets = np.zeros((len(rows), len(entries)))
    for j, row in enumerate(rows):
        unknown = [e for e in row["expected"] if e not in slot]
        if unknown:  # else the question would train as out-of-domain (a uniform target) at full weight
            raise ValueError(f"{name}: question {j} expects {unknown}, which the catalog does not hold")
        targets[j, [slot[e] for e in row["expected"]] or list(range(len(entries)))] = 1.0
    targets /= targets.sum(axis=1, keepdims=True)
    weights = np.array([1.0 if r["expected"] else ood_weight for r in rows])
    matrix = np.asarray(tune.dense_of(name, entries).matrix, dtype=np.float64)
    vectors = retrieval_embeddings.embed_queries([r["query"] for r in rows]).astype(np.float64)
    return Fold(vectors, matrix, targets, weights), entries, rows


def main() -> None:
    from common.text import retrieval_embeddings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lam", type=float, default=0.1)
    parser.add_argument("--scale", type=float, default=40.0)
    parser.add_argument("--ood-weight", type=float, default=0.0)
    parser.add_argument("--factors", default="1", help="comma-separated multipliers of the spread ratio")
    parser.add_argument("--raw", action="store_true", help="also route with the thresholds unscaled")
    parser.add_argument("--maxiter", type=int, default=300)
    parser.add_argument(
        "--rank-only",
        action="store_true",
        help="also route with the adapter ordering the dense top k only (lifts, veto and margins read the plain cosines)",
    )
    args = parser.parse_args()
    if not retrieval_embeddings.available():
        sys.exit("the sentence-embedding models are not available: nothing to adapt")
    names = list(tune.TUNING_INPUTS)
    data = {n: catalog_fold(n, args.ood_weight) for n in names}
    base = RouterConfig()
    out = {}
    for held in names:
        training = [data[n][0] for n in names if n != held]
        adapter = fit_adapter(training, lam=args.lam, scale=args.scale, maxiter=args.maxiter)
        ratio = spread_ratio(adapter, training)
        fold, entries, _ = data[held]
        dense = tune.dense_of(held, entries)
        plain = retrieval_embeddings.embed_query

        def mapped(text, adapter=adapter):
            return adapt(plain(text), adapter)

        row = {"spread_ratio": round(ratio, 3), "vectors_hit@1": [vectors_hit(fold), vectors_hit(fold, adapter)]}
        dense._embed_query = plain
        row["router"] = figures(tune.run(base, held, entries))
        factors = [float(v) for v in args.factors.split(",")] + ([0.0] if args.raw else [])
        try:
            dense._embed_query = mapped
            for factor in factors:
                c = ratio * factor if factor else 1.0
                config = replace(
                    base,
                    dense_full_lift=base.dense_full_lift * c,
                    dense_veto_lift=base.dense_veto_lift * c,
                    multipart_full_lift=base.multipart_full_lift * c,
                    dense_margin=base.dense_margin * c,
                )
                row[f"router_adapted_x{factor or 'raw'}"] = figures(tune.run(config, held, entries))
        finally:
            dense._embed_query = plain
        if args.rank_only:
            plain_top_k = dense.top_k

            def adapted_top_k(vector, k, adapter=adapter, plain_top_k=plain_top_k):
                # The adapter picks and orders the k entries; each keeps its plain cosine and the plain mean.
                sims = dense.similarities(vector)
                order = np.argsort(-dense.similarities(adapt(vector, adapter)), kind="stable")
                order = [int(i) for i in order if dense.present[i]][:k]
                return [(i, float(sims[i])) for i in order], plain_top_k(vector, k)[1]

            try:
                dense.top_k = adapted_top_k
                row["router_adapted_rank_only"] = figures(tune.run(base, held, entries))
            finally:
                del dense.top_k
        out[held] = row
        print(held, json.dumps(row), flush=True)
    sums: dict[str, dict] = {}
    for row in out.values():
        for key, value in row.items():
            if key.startswith("router"):
                total = sums.setdefault(key, {"objective": 0.0})
                total["objective"] = round(total["objective"] + value["objective"], 3)
                for name, count in value["counts"].items():
                    total[name] = total.get(name, 0) + count
    vectors = [sum(r["vectors_hit@1"][i] for r in out.values()) for i in (0, 1)]
    print(json.dumps({"held_out_objective_sum": sums, "vectors_hit@1_sum": vectors}, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
