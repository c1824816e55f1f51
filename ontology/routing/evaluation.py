"""Held-out evaluation of the two learned classifiers (pattern and chunk class).

The labeled sets live in ``ontology/data/eval/`` (an independent author's, split into dev
and test). Models are trained on the bundled data + dev only; test is evaluated, never
trained or tuned on. Dev figures come from grouped k-fold cross-validation (an item's
translations stay in one fold), which is what the thresholds are tuned on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .classifier import read_labeled, train_chunk_classifier, training_chunks
from .data import DATA_DIR, SAMPLE_CHUNKS_FILE
from .patterns import classify, train_pattern_model, training_examples
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


def _patterns(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def evaluate_patterns(items: list[dict], model) -> Figures:
    predicted, gold, fallback, correct_when_sure = [], [], 0, 0
    for item in items:
        match = classify(item["text"], model)
        predicted.append(match.pattern)
        gold.append(item["pattern"])
        if match.fallback:
            fallback += 1
        elif match.pattern == item["pattern"]:
            correct_when_sure += 1
    n = len(items)
    acc = sum(p == g for p, g in zip(predicted, gold)) / n if n else 0.0
    by_lang = {}
    for lang in sorted({i.get("lang", "pt") for i in items}):
        idx = [k for k, i in enumerate(items) if i.get("lang", "pt") == lang]
        by_lang[lang] = round(sum(predicted[k] == gold[k] for k in idx) / len(idx), 4)
    sure = n - fallback
    return Figures(
        acc,
        n,
        per_label_report(predicted, gold),
        {
            "by_language": by_lang,
            "fallback_rate": round(fallback / n, 4) if n else 0.0,
            "accuracy_when_sure": round(correct_when_sure / sure, 4) if sure else 0.0,
        },
    )


def patterns_test() -> Figures:
    model = train_pattern_model(training_examples())
    return evaluate_patterns(_patterns(EVAL_DIR / "patterns.test.json"), model)


def patterns_dev_cv(folds: int = FOLDS) -> Figures:
    dev = _patterns(EVAL_DIR / "patterns.dev.json")
    bundled = training_examples(include_dev=False)
    groups = sorted({i["group"] for i in dev})
    predicted_items, gold_items = [], []
    all_figs = []
    for f in range(folds):
        held = {g for k, g in enumerate(groups) if k % folds == f}
        train = bundled + [(i["text"], i["pattern"]) for i in dev if i["group"] not in held]
        model = train_pattern_model(train)
        test = [i for i in dev if i["group"] in held]
        all_figs.append(evaluate_patterns(test, model))
        for i in test:
            predicted_items.append(classify(i["text"], model).pattern)
            gold_items.append(i["pattern"])
    n = len(gold_items)
    acc = sum(p == g for p, g in zip(predicted_items, gold_items)) / n
    fallback = sum(fig.extra["fallback_rate"] * fig.n for fig in all_figs) / n
    return Figures(acc, n, per_label_report(predicted_items, gold_items), {"fallback_rate": round(fallback, 4)})


def evaluate_chunks(rows: list[tuple[str, str, str]], clf, *, skip_words: int = 0) -> Figures:
    predicted, gold, sub_ok = [], [], 0
    for text, cls, sub in rows:
        text = " ".join(text.split()[skip_words:])
        proposal = clf.propose(text)
        predicted.append(proposal.class_id)
        gold.append(cls)
        sub_ok += proposal.class_id == cls and proposal.subclass == sub
    n = len(rows)
    acc = sum(p == g for p, g in zip(predicted, gold)) / n if n else 0.0
    return Figures(acc, n, per_label_report(predicted, gold), {"subclass_accuracy": round(sub_ok / n, 4) if n else 0.0})


def chunks_test(*, skip_words: int = 0) -> Figures:
    clf = train_chunk_classifier(training_chunks())
    return evaluate_chunks(read_labeled(EVAL_DIR / "chunks.test.jsonl"), clf, skip_words=skip_words)


def chunks_dev_cv(folds: int = FOLDS, *, skip_words: int = 0) -> Figures:
    dev = read_labeled(EVAL_DIR / "chunks.dev.jsonl")
    bundled = training_chunks(include_dev=False)
    predicted, gold = [], []
    sub_ok = 0
    for f in range(folds):
        held = [r for k, r in enumerate(dev) if k % folds == f]
        train = bundled + [r for k, r in enumerate(dev) if k % folds != f]
        clf = train_chunk_classifier(train)
        fig = evaluate_chunks(held, clf, skip_words=skip_words)
        sub_ok += fig.extra["subclass_accuracy"] * fig.n
        for text, cls, _ in held:
            predicted.append(clf.propose(" ".join(text.split()[skip_words:])).class_id)
            gold.append(cls)
    n = len(gold)
    acc = sum(p == g for p, g in zip(predicted, gold)) / n
    return Figures(acc, n, per_label_report(predicted, gold), {"subclass_accuracy": round(sub_ok / n, 4)})


def bundled_chunks_trained_on_dev_only(*, skip_words: int = 0) -> Figures:
    """The bundled sample chunks classified by a model that never saw them (dev only)."""
    dev = read_labeled(EVAL_DIR / "chunks.dev.jsonl")
    clf = train_chunk_classifier(dev)
    return evaluate_chunks(read_labeled(SAMPLE_CHUNKS_FILE), clf, skip_words=skip_words)
