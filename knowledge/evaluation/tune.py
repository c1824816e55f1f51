"""Choose router settings by leave-one-catalog-out cross-validation over the DEV splits.

    python -m knowledge.evaluation.tune [--grid NAME] [--json] [--rerank] [--example-questions] [--extra NAME=DIR ...]

``--extra`` adds a catalog outside the repository to the pool (its packages
and its ``questions.dev.json``; never its test split).

Reads only ``questions.dev.json`` of each catalog in ``TUNING_INPUTS`` (a test
asserts no test-split question reaches any tuning input). For each held-out
catalog, the candidate with the best objective on the other catalogs' dev
splits is picked and scored on the held-out dev split: that is the
generalization estimate; the shipped defaults are the candidate that is best
pooled over all dev splits, reported next to its CV estimate, unless
docs/retrieval.md says why the objective cannot choose that setting (the
listing threshold: a listed entry costs the objective nothing).

Objective per catalog: mean of hit@1, usable and out-of-domain precision.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from knowledge.offline_catalog import folder_dense, load_package_folder, with_example_questions  # noqa: E402
from knowledge.retrieval.evaluation import evaluate_report, load_queries  # noqa: E402
from knowledge.retrieval import RouterConfig, RouterIndex  # noqa: E402
from knowledge.retrieval.dense import PASSAGE_BODY_CHARS  # noqa: E402
from knowledge.retrieval.fusion import DEFAULT_WEIGHTS  # noqa: E402

CATALOGS = ROOT / "knowledge" / "evaluation" / "catalogs"
# Every file tuning reads. Dev splits only: the test splits are reported, never tuned on.
TUNING_INPUTS = {
    "sample": (ROOT / "knowledge" / "catalog", CATALOGS / "sample" / "questions.dev.json"),
    "saas": (CATALOGS / "saas" / "packages", CATALOGS / "saas" / "questions.dev.json"),
    "hr": (CATALOGS / "hr" / "packages", CATALOGS / "hr" / "questions.dev.json"),
    "hospital": (CATALOGS / "hospital" / "packages", CATALOGS / "hospital" / "questions.dev.json"),
    "university": (CATALOGS / "university" / "packages", CATALOGS / "university" / "questions.dev.json"),
    "logistics": (CATALOGS / "logistics" / "packages", CATALOGS / "logistics" / "questions.dev.json"),
    "cityhall": (CATALOGS / "cityhall" / "packages", CATALOGS / "cityhall" / "questions.dev.json"),
    "insurance": (CATALOGS / "insurance" / "packages", CATALOGS / "insurance" / "questions.dev.json"),
    "telecom": (CATALOGS / "telecom" / "packages", CATALOGS / "telecom" / "questions.dev.json"),
    "vet": (CATALOGS / "vet" / "packages", CATALOGS / "vet" / "questions.dev.json"),
    # Written after the fifteenth round, by helpers who saw only the format (docs/retrieval.md, "Two more
    # catalogs"): their test splits were first run on a router nobody had tuned on them.
    "energia": (CATALOGS / "energia" / "packages", CATALOGS / "energia" / "questions.dev.json"),
    "condominio": (CATALOGS / "condominio" / "packages", CATALOGS / "condominio" / "questions.dev.json"),
    # Written in the nineteenth round from knowledge/evaluation/catalogs/FORMAT.md alone (docs/retrieval.md,
    # "Four more catalogs, from the brief"): their test splits were first run on the router as shipped.
    "biblioteca": (CATALOGS / "biblioteca" / "packages", CATALOGS / "biblioteca" / "questions.dev.json"),
    "transporte": (CATALOGS / "transporte" / "packages", CATALOGS / "transporte" / "questions.dev.json"),
    "aereo": (CATALOGS / "aereo" / "packages", CATALOGS / "aereo" / "questions.dev.json"),
    "mercado": (CATALOGS / "mercado" / "packages", CATALOGS / "mercado" / "questions.dev.json"),
}


def normalized(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    return " ".join(re.findall(r"\w+", "".join(ch for ch in text if not unicodedata.combining(ch))))


def tuning_questions(name: str) -> list[dict]:
    """A catalog's dev questions, less any that is also a test question of ANY catalog.

    Independent authors can write the same question (an out-of-domain "weather"
    group appears in one catalog's dev split and another's test split); tuning
    on it would tune on that test split. The test files are read for their
    normalized text only, never shown.
    """
    held_out = {
        normalized(row["query"])
        for path in sorted(CATALOGS.glob("*/questions.test.json"))
        for row in load_queries(path)
    }
    return [row for row in load_queries(TUNING_INPUTS[name][1]) if normalized(row["query"]) not in held_out]


def extra_catalog(folder: Path):
    """A catalog outside the repository for the LOCO pool: its packages and its DEV split, nothing else."""
    questions = folder / "questions.dev.json"
    return load_package_folder(folder / "packages"), load_queries(questions)


def context_of(row):
    ctx = row.get("context") or {}
    focus, parents, page = ctx.get("focus"), ctx.get("parentIds") or (), ctx.get("page")
    if isinstance(focus, dict):
        parents = focus.get("parentIds") or parents
        focus = focus.get("semanticId")
    if isinstance(page, dict):
        page = page.get("semanticId") or page.get("id")
    return focus, tuple(parents), page


_DENSE: dict[str, object] = {}


def dense_of(name: str, entries, body_chars: int = PASSAGE_BODY_CHARS):
    """The catalog's entry vectors (cached on disk and per process); None with the model off."""
    examples = EXAMPLES.get(name) or None
    key = f"{name}:{len(entries)}:{body_chars}:{bool(examples)}"
    if key not in _DENSE:
        _DENSE[key] = folder_dense(entries, body_chars=body_chars, examples=examples)
    return _DENSE[key]


# Example questions blended into the entries' vectors (``--example-questions``): catalog name → the
# stand-in model's proposals (example_questions.proposed.json), or empty for the shipped vectors.
EXAMPLES: dict[str, dict] = {}


def catalog_entries(name: str, folder: Path | None = None) -> list:
    """A tuning catalog's entries, with its proposed example questions as accepted ones when
    ``--example-questions`` loaded them (``EXAMPLES``): their vectors and their words, as the app has them."""
    return with_example_questions(load_package_folder(folder or TUNING_INPUTS[name][0]), EXAMPLES.get(name))


def example_questions(name: str) -> dict:
    """A catalog's proposed example questions (package id → questions), from the file beside its dev split."""
    from knowledge.offline_catalog import example_questions_file

    path = TUNING_INPUTS[name][1].parent / "example_questions.proposed.json"
    return example_questions_file(path) if path.exists() else {}


# Each catalog's out-of-scope questions (``--out-of-scope``): catalog name → the stand-in model's
# proposals (out_of_scope.proposed.json), set as ``RouterConfig.out_of_scope`` when it routes.
OUT_OF_SCOPE: dict[str, tuple[str, ...]] = {}


def out_of_scope_questions(name: str) -> tuple[str, ...]:
    """A catalog's proposed out-of-scope questions, from the file beside its dev split (none without it)."""
    from knowledge.offline_catalog import out_of_scope_file

    path = TUNING_INPUTS[name][1].parent / "out_of_scope.proposed.json"
    return out_of_scope_file(path) if path.exists() else ()


def with_out_of_scope(config: RouterConfig, name: str) -> RouterConfig:
    """``config`` with the catalog's out-of-scope questions when ``--out-of-scope`` loaded them."""
    questions = OUT_OF_SCOPE.get(name)
    return replace(config, out_of_scope=questions) if questions else config


def run(config: RouterConfig, name: str, entries=None, queries=None, body_chars: int = PASSAGE_BODY_CHARS):
    """``body_chars``: the passage recipe's body length (what entries are embedded as, not a router setting)."""
    entries = entries if entries is not None else catalog_entries(name)
    queries = queries if queries is not None else tuning_questions(name)
    config = with_out_of_scope(config, name)
    index = RouterIndex(entries, config=config, dense=dense_of(name, entries, body_chars))

    def route(row):
        focus, parents, page = context_of(row)
        return index.route(row["query"], focus=focus, parents=parents, page=page)

    return evaluate_report(queries, route, {e.package_id: e.kind for e in entries})


def objective(report) -> float:
    k = report.by_kind()["all"]
    parts = [k["hit@1"]["rate"], k["usable"]["rate"]]
    if "ood_precision" in k:
        parts.append(k["ood_precision"]["rate"])
    return sum(parts) / len(parts)


GRIDS = {
    "crosslang": {
        "lexicon_weight": [0.0, 0.5, 0.7, 0.9],
        "cognate_weight": [0.0, 0.5],
    },
    "thresholds": {
        "lexicon_weight": [0.0, 0.5],
        "full_coverage": [0.25, 0.35],
        "listed_coverage": [0.2, 0.3],
        "full_relative_fused": [0.35, 0.5],
        "unknown_term_weight": [1.0, 1.5],
    },
    "dense": {
        "body_chars": [0, 150, 300],
        "weights": [{**DEFAULT_WEIGHTS, "dense": w} for w in (0.0, 1.0, 2.0, 3.0)],
        "dense_full_lift": [0.05, 0.06, 0.07, 9.0],
        "dense_gate": ["always", "bm25_strong"],
    },
    # The dense gate and the meaning check of lexical full bodies (signals._dense_veto).
    "gate": {
        "dense_gate": ["bm25_strong", "always", "covered"],
        "dense_gate_coverage": [0.6, 0.7, 0.8],
        "dense_veto_lift": [9.0, 0.02, 0.025, 0.03],
        "dense_veto_rank": [3, 5, 8],
    },
    # When to embed alone (the meaning check as shipped): always, or skip when BM25's strong best
    # holds this much of the question's IDF.
    "gate_coverage": {
        "dense_gate": ["covered", "always"],
        "dense_gate_coverage": [0.7, 0.8, 0.9, 1.0],
    },
    # The meaning check of lexical full bodies alone (re-checked on top of a changed gate).
    "veto": {
        "dense_veto_lift": [9.0, 0.02, 0.025, 0.03],
        "dense_veto_rank": [3, 5, 8],
    },
    # The meaning check with or without its say over entries a curated keyword holds.
    "veto_keywords": {
        "dense_veto_keywords": [True, False],
        "dense_veto_rank_one_part": [None, 3],
    },
    # The meaning check of a one-part message's lexical bodies, apart from the parts of longer ones.
    "veto_one_part": {
        "dense_veto_lift_one_part": [None, 0.025, 0.03],
        "dense_veto_rank_one_part": [None, 3],
    },
    # The one-part meaning check with entries whose BM25 match holds this share of the question left
    # out of it (dense_veto_coverage; 9: none left out).
    "veto_coverage": {
        "dense_veto_lift_one_part": [None, 0.025],
        "dense_veto_rank_one_part": [None, 3],
        "dense_veto_coverage": [9.0, 0.7, 0.8, 0.9, 1.0],
    },
    # The exemption for a message of one part only, or for every part (a part of a longer message is
    # short: one word can hold all of it).
    "veto_coverage_scope": {
        "dense_veto_coverage": [9.0, 0.8, 0.9, 1.0],
        "dense_veto_coverage_several": [False, True],
    },
    # A multi-part message's parts: full body for a part's best when words and meaning agree.
    "multipart": {
        "multipart_full_lift": [9.0, 0.02, 0.03, 0.04, 0.05],
        "multipart_lexical_rank": [0, 3],
    },
    # A one-part message's best: full body when words and meaning agree on it (shaping._agreed_full).
    "agreed": {
        "agreed_full_lift": [9.0, 0.02, 0.03, 0.04, 0.05, 0.06],
        "agreed_lexical_rank": [0, 1, 3],
    },
    # A one-part message's best, its dense top, in full when worded like one of its accepted example
    # questions (--example-questions; shaping._agreed_full): the closest one's cosine, and the lift.
    "example_full": {
        "agreed_example_cosine": [9.0, 0.84, 0.85, 0.86, 0.87, 0.88],
        "agreed_example_lift": [0.02, 0.025, 0.03, 0.035, 0.04],
    },
    # A message of several parts: the whole message's closest entry in full when first (shaping._message_full).
    "message_full": {
        "message_full_lift": [9.0, 0.03, 0.035, 0.04, 0.045, 0.05],
        "message_full_lift_examples": [9.0, 0.03, 0.035, 0.04, 0.045, 0.05],
    },
    # A message of several parts whose whole meaning points at no entry: its parts' word bodies listed
    # (shaping._message_floor). Both kinds of entry set alike (with --example-questions every entry has them).
    "message_floor": {
        "message_lift_floor": [0.0, 0.018, 0.02, 0.022, 0.024, 0.026],
        "message_lift_floor_examples": [0.0, 0.018, 0.02, 0.022, 0.024, 0.026],
    },
    # A message closer to a background question than to any entry gets no full body (index.background_verdict):
    # the margin for entries without example questions, and (--example-questions) for entries with them.
    "background": {"background_margin": [9.0, 0.06, 0.07, 0.08, 0.09, 0.10, 0.11, 0.12]},
    "background_examples": {"background_margin_examples": [9.0, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10]},
    # ... or closer to one of the catalog's own out-of-scope questions (``--out-of-scope``), per kind of the
    # closest entry.
    "out_of_scope": {"out_of_scope_margin": [9.0, 0.02, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.12]},
    "out_of_scope_examples": {
        "out_of_scope_margin_examples": [9.0, 0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.10]
    },
    # The two whole-message rules together, for entries with example questions (--example-questions).
    "message_examples": {
        "message_full_lift_examples": [9.0, 0.03, 0.035, 0.04],
        "message_lift_floor_examples": [0.0, 0.022],
    },
    # Entries with example questions (--example-questions): their own full-body lift, and the share of
    # their closest example question's cosine in their score (0: the blend alone).
    "examples": {
        "dense_closest_example_share": [0.0, 0.2, 0.3, 0.5],
        "dense_full_lift_examples": [0.05, 0.06, 0.07],
    },
    # The example questions' words (--example-questions): the "questions" signal's weight, depth and share.
    "questions": {
        "weights": [{**DEFAULT_WEIGHTS, "questions": w} for w in (0.0, 0.5, 1.0, 2.0)],
        "questions_top_k": [1, 3, 5],
        "questions_share": [0.0, 0.5],
        "questions_typed_terms": [False, True],
    },
    "weak": {
        "weak_lexical_factor": [1.0, 0.75, 0.5, 0.25, 0.0],
    },
    # A message of several parts: the whole message's closest entries, rank only, at this weight (0: off).
    "message": {
        "weights": [{**DEFAULT_WEIGHTS, "message": w} for w in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)],
    },
    # The whole message's closest entry ranked once more, at this weight (0: off).
    "message_top": {
        "weights": [{**DEFAULT_WEIGHTS, "message_top": w} for w in (0.0, 1.0, 2.0, 3.0)],
    },
    # Both weights of the whole message's ranking together.
    "message_both": {
        "weights": [{**DEFAULT_WEIGHTS, "message": m, "message_top": t} for m in (2.0, 3.0, 4.0) for t in (0.0, 1.0)],
    },
    # The whole message embedded once more, or read from its parts' cosines (no embedding).
    "message_parts": {
        "weights": [{**DEFAULT_WEIGHTS, "message": w} for w in (0.0, 2.0, 3.0, 4.0)],
        "message_from_parts": [False, True],
    },
    # Strong lexical hits the meaning check vetoed: damped as weak ones (weak_lexical_factor) when the
    # part's closest entry stands this far above the catalog's mean cosine (9: never).
    "vetoed": {
        "vetoed_weak_lift": [9.0, 0.0, 0.02, 0.025, 0.03, 0.035, 0.04],
    },
    # The damping with the dense signal's weights re-chosen around it.
    "weak_dense": {
        "weak_lexical_factor": [0.25, 0.5],
        "weights": [{**DEFAULT_WEIGHTS, "dense": d, "dense_margin": m} for d in (2.0, 3.0) for m in (2.0, 3.0)],
    },
    # How far above the catalog's mean cosine an entry must stand to be ranked by meaning at all.
    "dense_floor": {
        "dense_floor": [0.0, 0.01, 0.02, 0.03, 0.04],
    },
    # The dense top's lead over the runner-up that ranks it once more, and that ranking's weight.
    "margin": {
        "dense_margin": [9.0, 0.01, 0.015, 0.02, 0.03, 0.04],
        "weights": [{**DEFAULT_WEIGHTS, "dense_margin": w} for w in (1.0, 2.0, 3.0, 4.0)],
    },
    "fields": {
        "field_weights": [
            {"id": 3.0, "aliases": 3.0, "title": t, "keywords": k, "summary": s, "body": b}
            for t in (1.5, 2.5)
            for k in (2.0, 3.0)
            for s in (1.5, 2.5)
            for b in (0.7, 1.0, 1.5)
        ],
        "rrf_k": [5, 10],
    },
}


def weights_shown(weights: dict) -> dict:
    """A candidate's signal weights as a grid line shows them: the dense weight, and any other away from
    its default."""
    return {
        "dense": weights.get("dense"),
        **{k: w for k, w in weights.items() if k != "dense" and DEFAULT_WEIGHTS.get(k) != w},
    }


def settings_moved(cand: dict, prefix: str) -> bool:
    """Whether a candidate sets any ``prefix`` setting away from its default (one "off" row suffices)."""
    default = RouterConfig()
    return any(k.startswith(prefix) and v != getattr(default, k) for k, v in cand.items())


def candidates(grid: dict[str, list]):
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        yield dict(zip(keys, values))


class Routed:
    """A catalog's tuning questions routed once, part by part, re-ranker off, features collected.

    Re-ranker candidates are then replayed on copies of these outcomes (re-rank, shape, judge):
    the same result as routing with the candidate configured, without routing again.
    """

    def __init__(self, config: RouterConfig, name: str, entries, queries):
        from knowledge.retrieval.index import background_verdict, message_meaning, message_ranking_of
        from knowledge.retrieval.signals import route_part
        from knowledge.retrieval.splitting import split_parts

        self.name, self.queries = name, queries
        self.kinds = {e.package_id: e.kind for e in entries}
        config = with_out_of_scope(replace(config, rerank_weights=None), name)
        self.index = RouterIndex(entries, config=config, dense=dense_of(name, entries))
        self.index.collect_features = True
        self.outcomes = []
        self.messages = []  # each message's whole-message ranking (index.message_ranking_of), or None
        self.verdicts = []  # each message's background verdict (index.background_verdict), or None
        for row in queries:
            focus, parents, page = context_of(row)
            message = row["query"]
            texts = split_parts(message) or [message or ""]
            if not (message or "").strip() and (focus or page):
                texts = [""]
            self.outcomes.append(
                [
                    route_part(
                        self.index, t, focus=focus, parents=parents, page=page, feedback={}, several=len(texts) > 1
                    )
                    for t in texts
                ]
            )
            parts = self.outcomes[-1]
            meaning = message_meaning(self.index, message, parts) if len(parts) > 1 else None
            self.messages.append(message_ranking_of(self.index, meaning))
            self.verdicts.append(background_verdict(self.index, parts, meaning))

    def training_rows(self):
        """(features, label) of every part's candidates: label 1 when the candidate is expected."""
        import numpy as np

        xs, ys, starts = [], [], []
        for row, parts in zip(self.queries, self.outcomes):
            expected = set(row["expected"])
            for o in parts:
                if o.features:
                    starts.append(len(xs))
                for i, f in o.features.items():
                    xs.append(f)
                    ys.append(float(self.index.entries[i].package_id in expected))
        return np.vstack(xs), np.asarray(ys), np.asarray(starts)

    def report(self, weights=None, full_probability=1.1, veto=0.0, reorder=True, full_weights=None, first=1.1):
        from knowledge.retrieval import rerank
        from knowledge.retrieval.shaping import shape

        results = {}
        for row, parts, message_ranking, verdict in zip(self.queries, self.outcomes, self.messages, self.verdicts):
            if weights is not None:
                copies = []
                for o in parts:
                    o = replace(
                        o, fused=dict(o.fused), eligible=set(o.eligible), why={i: list(n) for i, n in o.why.items()}
                    )
                    if o.fused:
                        rerank.rerank_part(
                            o.fused,
                            o.eligible,
                            o.why,
                            o.features,
                            weights,
                            full_probability,
                            self.index.entries,
                            veto_probability=veto,
                            reorder=reorder,
                            full_weights=full_weights,
                            first_probability=first,
                        )
                    copies.append(o)
                parts = copies
            results[id(row)] = shape(
                self.index,
                parts,
                budget_tokens=None,
                max_full=None,
                message_ranking=message_ranking,
                background=verdict,
            )
        return evaluate_report(self.queries, lambda row: results[id(row)], self.kinds)


# Which model orders a part's candidates (and its L2), chosen first with the hand-set full rules kept;
# then when the pointwise model's probability makes the first candidate, or any, eligible for full,
# and below which it vetoes the hand-set rules' eligibility (abstention).
RERANK_ORDER = [("none", 0.0), ("pointwise", 1.0), ("pointwise", 10.0), ("listwise", 1.0), ("listwise", 10.0)]
RERANK_FULL = {"first": (0.5, 0.6, 0.7, 0.8, 0.9, 1.1), "tau": (0.9, 1.1), "veto": (0.0, 0.1, 0.2, 0.3, 0.4)}


def figures_of(report) -> dict:
    kinds = report.by_kind()
    k = kinds["all"]
    par = report.parity()
    return {
        "objective": round(objective(report), 3),
        "hit@1": k["hit@1"]["rate"],
        "usable": k["usable"]["rate"],
        "ood": k.get("ood_precision", {}).get("rate"),
        "par_en": par.get("en", {}).get("ratio"),
        "par_es": par.get("es", {}).get("ratio"),
        # Multi-part questions with every part's answer in usable form (issue 12's multi-part target).
        "multi": kinds.get("multi", {}).get("usable", {}).get("rate"),
        # Full bodies nobody asked for, per question: what the objective does not price.
        "unexpected_full": k["unexpected_full"]["per_question"],
    }


def rerank_models(x, y, starts) -> dict:
    from knowledge.retrieval import rerank

    models = {"full": rerank.fit(x, y, l2=1.0)}
    for kind, l2 in RERANK_ORDER:
        if kind == "pointwise":
            models[(kind, l2)] = rerank.fit(x, y, l2=l2)
        elif kind == "listwise":
            models[(kind, l2)] = rerank.fit_listwise(x, y, starts, l2=l2)
    return models


def rerank_choose(routed, train: list[str], models) -> dict:
    """The ordering model, then the full-body thresholds, best summed objective over ``train``."""

    def score(order, first=1.1, tau=1.1, veto=0.0):
        weights = models.get(order)
        if weights is None and (first < 1.1 or tau < 1.1 or veto > 0):
            weights, reorder = models["full"], False
        else:
            reorder = weights is not None
        args = {
            "weights": weights,
            "reorder": reorder,
            "full_weights": models["full"],
            "first": first,
            "full_probability": tau,
            "veto": veto,
        }
        return sum(objective(routed[n].report(**args)) for n in train), args

    order = max(RERANK_ORDER, key=lambda o: score(o)[0] + 1e-9 * (o[0] == "none"))
    best = None
    for cand in candidates(RERANK_FULL):
        total, args = score(order, **cand)
        if best is None or total > best[0] + 1e-9:
            best = (total, {"order": order, **cand}, args)
    return {"choice": best[1], "args": best[2], "train_objective": round(best[0] / len(train), 3)}


def rerank_loco(base: RouterConfig, data, routed=None) -> dict:
    """Per held-out catalog: trained on the others' dev splits, model and thresholds chosen on them, scored on it."""
    import numpy as np

    routed = routed or {n: Routed(base, n, *data[n]) for n in data}
    rows = {n: r.training_rows() for n, r in routed.items()}
    out = {}
    for held in [*data, "pooled"]:
        train = [n for n in data if n != held]
        x = np.vstack([rows[n][0] for n in train])
        y = np.concatenate([rows[n][1] for n in train])
        offsets = np.cumsum([0] + [len(rows[n][0]) for n in train])
        starts = np.concatenate([rows[n][2] + off for n, off in zip(train, offsets)])
        models = rerank_models(x, y, starts)
        chosen = rerank_choose(routed, train, models)
        entry = {"choice": chosen["choice"], "train_objective": chosen["train_objective"]}
        if held != "pooled":
            entry["held_out"] = figures_of(routed[held].report(**chosen["args"]))
            entry["without"] = figures_of(routed[held].report())
        else:
            entry["models"] = {str(k): [round(w, 4) for w in v] for k, v in models.items()}
        out[held] = entry
    return out


FEEDBACK_COSINES = (0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.92)
# A false carry-over promotes a wrong body into a stranger's answer: it costs this many right ones.
FEEDBACK_FALSE_COST = 5


def feedback_pairs(config: RouterConfig, name: str, entries, queries) -> dict:
    """Ordered pairs of single-answer questions: would feedback learnt on one carry over to the other?

    The rule of ``knowledge.feedback.related_feedback_weights``: same best entry before feedback, the
    fetched entry among the other's top entries, and top-entry overlap ≥ 0.6 (signature) or question
    cosine ≥ τ. A pair is right when both questions expect the same entry.
    """
    from common.text import retrieval_embeddings

    rows = [r for r in queries if len(r["expected"]) == 1 and not r.get("context") and r.get("type") != "multi"]
    index = RouterIndex(entries, config=config, dense=dense_of(name, entries))
    ranks = [index.route(r["query"], related_feedback=lambda k, rr: {}).part_rankings[0] for r in rows]
    vectors = retrieval_embeddings.embed_queries([r["query"] for r in rows])
    counts = {"signature": [0, 0]} | {f"cosine {t}": [0, 0] for t in FEEDBACK_COSINES}
    for a, b in itertools.permutations(range(len(rows)), 2):
        ra, rb, fetched = ranks[a], ranks[b], rows[a]["expected"][0]
        if not (ra and rb and ra[0] == rb[0] and fetched in rb):
            continue
        right = int(rows[a]["expected"] == rows[b]["expected"])
        signature = len(set(ra) & set(rb)) / len(set(ra) | set(rb)) >= 0.6
        cosine = float(vectors[a] @ vectors[b])
        for label, fires in [("signature", signature)] + [
            (f"cosine {t}", signature or cosine >= t) for t in FEEDBACK_COSINES
        ]:
            if fires:
                counts[label][1 - right] += 1
    return counts


def feedback_loco(base: RouterConfig, data) -> dict:
    """The question-cosine floor for feedback carry-over, chosen on the other catalogs' pairs."""
    per = {n: feedback_pairs(base, n, *data[n]) for n in data}

    def score(label, names):
        return sum(per[n][label][0] - FEEDBACK_FALSE_COST * per[n][label][1] for n in names)

    out = {"pairs (right, wrong)": per}
    for held in data:
        others = [n for n in data if n != held]
        best = max((f"cosine {t}" for t in FEEDBACK_COSINES), key=lambda label: (score(label, others), label))
        out[held] = {"chosen": best, "held_out": per[held][best], "signature only": per[held]["signature"]}
    out["pooled"] = {f"cosine {t}": score(f"cosine {t}", list(data)) for t in FEEDBACK_COSINES}
    return out


def skipped(cand: dict) -> bool:
    """Whether a grid's candidate repeats another (a setting its other settings make unread)."""
    if cand.get("dense_gate", "covered") != "covered" and cand.get("dense_gate_coverage", 0.7) != 0.7:
        return True  # the coverage floor is read by the "covered" gate only
    if "weights" in cand and not cand["weights"].get("questions", 1.0) and settings_moved(cand, "questions_"):
        return True  # the questions signal's settings are read only when it has a weight
    if (
        "dense_veto_lift_one_part" in cand
        and "dense_veto_coverage" in cand
        and ((cand["dense_veto_lift_one_part"] is None) != (cand["dense_veto_rank_one_part"] is None))
    ):
        return True  # with the coverage exemption, the one-part check is set by both or by neither
    if "message_full_lift" in cand and cand["message_full_lift"] != cand["message_full_lift_examples"]:
        return True  # message_full: both kinds of entry set alike (one of them is read per mode)
    if "message_lift_floor" in cand and cand["message_lift_floor"] != cand["message_lift_floor_examples"]:
        return True  # message_floor: likewise
    if cand.get("agreed_example_cosine") == 9.0 and cand.get("agreed_example_lift", 0.04) != 0.04:
        return True  # the lift is read only with the cosine set
    if cand.get("dense_veto_coverage") == 9.0 and cand.get("dense_veto_coverage_several"):
        return True  # no exemption: its scope is not read
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--grid", default="crosslang", choices=sorted(GRIDS))
    parser.add_argument("--base", default="{}", help="JSON of RouterConfig fields every candidate starts from")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rerank", action="store_true", help="Train and measure the learned re-ranker (LOCO)")
    parser.add_argument("--feedback", action="store_true", help="Choose the feedback question-cosine floor (LOCO)")
    parser.add_argument(
        "--extra",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="Another catalog for the pool: DIR/packages and DIR/questions.dev.json (its dev split only)",
    )
    parser.add_argument(
        "--example-questions",
        action="store_true",
        help="Blend each catalog's proposed example questions (example_questions.proposed.json) into its vectors",
    )
    parser.add_argument(
        "--out-of-scope",
        action="store_true",
        help="Give each catalog its proposed out-of-scope questions (out_of_scope.proposed.json)",
    )
    args = parser.parse_args()
    base = replace(RouterConfig(), **json.loads(args.base))
    if args.out_of_scope:
        OUT_OF_SCOPE.update({n: out_of_scope_questions(n) for n in TUNING_INPUTS})
    if args.example_questions:
        EXAMPLES.update({n: example_questions(n) for n in TUNING_INPUTS})
    data = {n: (catalog_entries(n, p), tuning_questions(n)) for n, (p, _) in TUNING_INPUTS.items()}
    for spec in args.extra:
        name, _, folder = spec.partition("=")
        data[name] = extra_catalog(Path(folder))
    if args.rerank:
        print(json.dumps(rerank_loco(base, data), indent=1))
        return
    if args.feedback:
        print(json.dumps(feedback_loco(base, data), indent=1))
        return
    rows = []
    for cand in candidates(GRIDS[args.grid]):
        if skipped(cand):
            continue
        settings = dict(cand)
        body_chars = settings.pop("body_chars", PASSAGE_BODY_CHARS)
        config = replace(base, **settings)
        scores = {}
        figures = {}
        for n, (entries, queries) in data.items():
            report = run(config, n, entries, queries, body_chars)
            scores[n] = objective(report)
            figures[n] = {k: v for k, v in figures_of(report).items() if k != "objective"}
        rows.append((cand, scores, figures))
        if not args.json:
            print(
                json.dumps({k: weights_shown(v) if k == "weights" else v for k, v in cand.items()}),
                " ".join(f"{n}={scores[n]:.3f}" for n in scores),
                f"sum={sum(scores.values()):.3f}",
                json.dumps(figures),
            )
    # Leave one catalog out: pick on the others, score on the held-out one.
    loco = {}
    for held in data:
        best = max(rows, key=lambda r: sum(s for n, s in r[1].items() if n != held))
        loco[held] = {"chosen": best[0], "held_out_objective": round(best[1][held], 3), "figures": best[2][held]}
    pooled = max(rows, key=lambda r: sum(r[1].values()))
    out = {"loco": loco, "pooled_best": pooled[0], "pooled_figures": pooled[2]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
