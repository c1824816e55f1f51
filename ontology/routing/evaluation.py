"""Evaluation of the two learned classifiers (pattern and chunk class).

Labeled data, by author:

* ``ontology/data/pattern_examples.yaml``, ``chunks.jsonl`` — the maintainers' (always trained on);
* ``ontology/data/eval/*.dev.*`` and ``*.test.*`` — an independent author's, split by group;
* ``ontology/data/train/`` — a second independent author's training set;
* ``ontology/data/agro/chunks.dev.jsonl`` — a third independent author's chunks (dev split;
  the set's test split lives outside the repo: ``evaluate.py test --chunks-file PATH``).

Everything is chosen by cross-validation over train + dev (``*_cv``: k-fold, an item's
translations stay in one fold, the maintainers' examples always train). The ``test`` split
is only evaluated, by the model the process serves (trained on everything else), never
trained or tuned on. CV reuses the committed training vectors (``vectors.py``), so it
embeds nothing unless words are cut from the held-out texts.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from common.text import embeddings

from . import vectors as training_vectors
from .classifier import (
    chunk_classifier,
    read_labeled,
    train_chunk_classifier,
    training_chunks,
    training_chunks_by_source,
    training_features,
)
from .data import DATA_DIR, SAMPLE_CHUNKS_FILE
from .patterns import VECTOR_SET as PATTERN_VECTORS
from .patterns import bundled_examples, classify, pattern_model, train_pattern_model, training_items
from .textmodel import per_label_report

EVAL_DIR = DATA_DIR / "eval"
FOLDS = 5


@dataclass
class Figures:
    accuracy: float
    n: int
    per_label: dict
    extra: dict

    def as_dict(self) -> dict:
        return {"accuracy": round(self.accuracy, 4), "n": self.n, "per_label": self.per_label, **self.extra}


def _rate(hits: list[bool]) -> float:
    return round(sum(hits) / len(hits), 4) if hits else 0.0


def _by(keys: list[str], hits: list[bool]) -> dict[str, float]:
    return {k: _rate([h for kk, h in zip(keys, hits) if kk == k]) for k in sorted(set(keys))}


def _training_vectors(vector_set, texts: list[str]) -> np.ndarray | None:
    return training_vectors.load(vector_set, texts) if embeddings.enabled() else None


def _chunk_features(texts: list[str]) -> np.ndarray | None:
    return training_features(texts) if embeddings.enabled() else None


def _fold_of(groups: list[str], folds: int, seed: int) -> dict[str, int]:
    """Groups dealt round-robin into folds after a seeded shuffle (seed 0: sorted order)."""
    ordered = sorted(set(groups))
    if seed:
        random.Random(seed).shuffle(ordered)
    return {g: k % folds for k, g in enumerate(ordered)}


# --- query patterns ---------------------------------------------------------------------


def _pattern_figures(items: list[dict], matches: list) -> Figures:
    predicted = [m.pattern for m in matches]
    gold = [i["pattern"] for i in items]
    fallback = [m.fallback for m in matches]
    hits = [p == g for p, g in zip(predicted, gold)]
    extra = {
        "by_language": _by([i.get("lang", "pt") for i in items], hits),
        "fallback_rate": _rate(fallback),
        "accuracy_when_sure": _rate([h for h, f in zip(hits, fallback) if not f]),
    }
    if any("source" in i for i in items):
        extra["by_source"] = _by([i.get("source", "") for i in items], hits)
    return Figures(_rate(hits), len(items), per_label_report(predicted, gold), extra)


def evaluate_patterns(items: list[dict], model, vectors: np.ndarray | None = None) -> Figures:
    """Figures of `model` on labeled questions (`vectors`: their embeddings, if known)."""
    matches = [
        classify(item["text"], model, vector=None if vectors is None else vectors[k]) for k, item in enumerate(items)
    ]
    return _pattern_figures(items, matches)


def patterns_cv(folds: int = FOLDS, seed: int = 0) -> Figures:
    """Grouped k-fold CV over dev + train; the maintainers' examples train in every fold."""
    bundled, items = bundled_examples(), training_items()
    pairs = bundled + [(i["text"], i["pattern"]) for i in items]
    vectors = _training_vectors(PATTERN_VECTORS, [t for t, _ in pairs])
    fold_of = _fold_of([i["group"] for i in items], folds, seed)
    held_items, matches = [], []
    for fold in range(folds):
        held = [len(bundled) + k for k, i in enumerate(items) if fold_of[i["group"]] == fold]
        train = [r for r in range(len(pairs)) if r not in set(held)]
        model = train_pattern_model([pairs[r] for r in train], None if vectors is None else vectors[train])
        for r in held:
            held_items.append(items[r - len(bundled)])
            matches.append(classify(pairs[r][0], model, vector=None if vectors is None else vectors[r]))
    return _pattern_figures(held_items, matches)


def patterns_test() -> Figures:
    """The served model on the held-out test split (report only; never tune on this)."""
    items = json.loads((EVAL_DIR / "patterns.test.json").read_text(encoding="utf-8"))
    return evaluate_patterns(items, pattern_model())


# --- chunk classes ----------------------------------------------------------------------


def _cut(text: str, skip_words: int) -> str:
    return " ".join(text.split()[skip_words:])


def evaluate_chunks(
    rows: list[tuple[str, str, str]], clf, *, skip_words: int = 0, vectors: np.ndarray | None = None
) -> Figures:
    """Figures of `clf` on labeled chunks; `vectors` (their pooled features) only when no words
    are cut (cut texts are embedded anew)."""
    predicted, gold, sub_ok = [], [], []
    for k, (text, cls, sub) in enumerate(rows):
        vector = vectors[k] if vectors is not None and not skip_words else None
        proposal = clf.propose(_cut(text, skip_words), vector)
        predicted.append(proposal.class_id)
        gold.append(cls)
        sub_ok.append(proposal.class_id == cls and proposal.subclass == sub)
    hits = [p == g for p, g in zip(predicted, gold)]
    return Figures(_rate(hits), len(rows), per_label_report(predicted, gold), {"subclass_accuracy": _rate(sub_ok)})


def chunks_cv(folds: int = FOLDS, seed: int = 0, *, skip_words: int = 0) -> Figures:
    """k-fold CV over the labeled chunks (dev, train, agro); the bundled sample chunks train in
    every fold. `by_source` gives the accuracy on each author's chunks."""
    sourced = training_chunks_by_source()
    rows = [row for _, row in sourced]
    vectors = _chunk_features([t for t, _, _ in rows])
    labeled = [k for k, (source, _) in enumerate(sourced) if source != "bundled"]
    fold_of = _fold_of([str(k) for k in labeled], folds, seed)
    predicted, gold, sub_ok, sources = [], [], [], []
    for fold in range(folds):
        held = [k for k in labeled if fold_of[str(k)] == fold]
        train = [k for k in range(len(rows)) if k not in set(held)]
        clf = train_chunk_classifier([rows[k] for k in train], None if vectors is None else vectors[train])
        for k in held:
            text, cls, sub = rows[k]
            vector = None if vectors is None or skip_words else vectors[k]
            proposal = clf.propose(_cut(text, skip_words), vector)
            predicted.append(proposal.class_id)
            gold.append(cls)
            sub_ok.append(proposal.class_id == cls and proposal.subclass == sub)
            sources.append(sourced[k][0])
    hits = [p == g for p, g in zip(predicted, gold)]
    extra = {"subclass_accuracy": _rate(sub_ok), "by_source": _by(sources, hits)}
    return Figures(_rate(hits), len(gold), per_label_report(predicted, gold), extra)


def chunks_test(*, skip_words: int = 0, path: Path | None = None) -> Figures:
    """The served classifier on a held-out test split (report only; never tune on this):
    ``eval/chunks.test.jsonl`` by default, or another set's test file (`path`)."""
    rows = read_labeled(path or EVAL_DIR / "chunks.test.jsonl")
    return evaluate_chunks(rows, chunk_classifier(), skip_words=skip_words)


def bundled_chunks_by_a_model_that_never_saw_them(*, skip_words: int = 0) -> Figures:
    """The bundled sample chunks classified by a model trained on the labeled sets only."""
    rows = training_chunks()
    n_bundled = len(read_labeled(SAMPLE_CHUNKS_FILE))
    vectors = _chunk_features([t for t, _, _ in rows])
    clf = train_chunk_classifier(rows[n_bundled:], None if vectors is None else vectors[n_bundled:])
    return evaluate_chunks(
        rows[:n_bundled], clf, skip_words=skip_words, vectors=None if vectors is None else vectors[:n_bundled]
    )


def read_test_patterns(path: Path | None = None) -> list[dict]:
    return json.loads((path or EVAL_DIR / "patterns.test.json").read_text(encoding="utf-8"))
