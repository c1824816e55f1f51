"""Query-pattern classifier (seed 002, the six ontological patterns): a learned model.

Two softmax regressions (``textmodel``), blended:

* over the message's words, bigrams, stems and character 4-grams, plus one feature per
  hand-written cue of ``data/patterns.yaml`` that matches (the old rules are evidence the
  model weighs, not the decision);
* over the message's sentence embedding (``common/text/embeddings.py``, multilingual e5):
  meaning across wording and language, which the words of three languages alone miss.

Probabilities are combined as ``p ∝ p_terms^TERM_WEIGHT · p_dense^(1-TERM_WEIGHT)``; the
weight and the penalties were chosen by grouped 5-fold cross-validation on train + dev.
With CONTEXTO_EMBEDDINGS=off (or the engine missing) it is the term model alone.

Trained once per process from files in the repo, no network:

* ``data/pattern_examples.yaml`` — questions the maintainers wrote;
* ``data/eval/patterns.dev.json`` — the dev split of an independent author's labeled set
  (``patterns.test.json`` is only ever evaluated, see ``ontology/tools/evaluate.py``);
* ``data/train/patterns.train.json`` — a second independent author's training set;
* ``data/vectors/patterns.npy`` — their embeddings, built by ``manage.py
  build_ontology_vectors`` (embedding them at start would take ~20 s).

Confidence is the top probability. When the top two are close (``close_margin``) or the
top is weak (``min_confidence``) the match says so: ``fallback: true`` with the
``runner_up``, and the router asks one short clarifying question instead of guessing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

import numpy as np

from common.text import embeddings

from . import vectors as training_vectors
from .data import DATA_DIR, patterns_file
from .text import normalize
from .textmodel import BlendedModel, text_features, train_dense_softmax, train_softmax

EVAL_DIR = DATA_DIR / "eval"
EXAMPLES_FILE = DATA_DIR / "pattern_examples.yaml"
DEV_FILE = EVAL_DIR / "patterns.dev.json"
TRAIN_FILE = DATA_DIR / "train" / "patterns.train.json"
L2 = 0.03
# a term seen in one training question only is dropped: same CV accuracy (0.917 / 0.924 on
# two fold assignments, with or without), 8k features instead of 19k, half the fitting time
MIN_COUNT = 2
# the embedding model's penalty and the term model's share of the blend (grouped 5-fold CV
# on train + dev, three fold assignments: blend 0.918, terms alone 0.84, embeddings
# alone 0.91; see docs/ontology.md)
DENSE_L2 = 10.0
TERM_WEIGHT = 0.35


@dataclass(frozen=True)
class PatternMatch:
    pattern: str
    confidence: float
    scores: dict[str, float] = field(default_factory=dict)
    fallback: bool = False
    runner_up: str = ""
    margin: float = 1.0

    def as_dict(self) -> dict:
        return {
            "pattern": self.pattern,
            "confidence": self.confidence,
            "scores": self.scores,
            "fallback": self.fallback,
            "runner_up": self.runner_up,
        }


@lru_cache(maxsize=1)
def _compiled_cues() -> tuple[tuple[str, re.Pattern], ...]:
    out = []
    for pattern_id, spec in patterns_file()["patterns"].items():
        out.extend((f"cue:{pattern_id}:{i}", re.compile(c["re"])) for i, c in enumerate(spec["cues"]))
    return tuple(out)


_WORDS = re.compile(r"[a-z0-9]+")


def pattern_features(message: str) -> list[str]:
    """Text features + the opening words (a question's form is mostly in how it starts)
    + each matched cue and, per pattern, whether any of its cues matched."""
    text = normalize(message)
    words = _WORDS.findall(text)
    opening = [f"st:{w}" for w in words[:3]] + [f"st2:{'_'.join(words[:2])}"]
    cues = [name for name, rx in _compiled_cues() if rx.search(text)]
    return text_features(message) + opening + cues + sorted({"cueany:" + c.split(":")[1] for c in cues})


def pattern_ids() -> tuple[str, ...]:
    return tuple(patterns_file()["patterns"])


def bundled_examples() -> list[tuple[str, str]]:
    """(text, pattern) pairs the maintainers wrote (``pattern_examples.yaml``)."""
    with EXAMPLES_FILE.open(encoding="utf-8") as fh:
        return [(t, pattern) for pattern, texts in yaml.safe_load(fh).items() for t in texts]


def labeled_items(path: Path, *, source: str) -> list[dict]:
    """An independent author's labeled questions, the group tagged with its file so that
    groups of two files never merge."""
    if not path.is_file():
        return []
    items = json.loads(path.read_text(encoding="utf-8"))
    return [{**item, "group": f"{source}:{item['group']}", "source": source} for item in items]


def training_items() -> list[dict]:
    """The labeled questions the model trains on besides the bundled ones: dev + train."""
    return labeled_items(DEV_FILE, source="dev") + labeled_items(TRAIN_FILE, source="train")


def training_examples() -> list[tuple[str, str]]:
    """(text, pattern) pairs the model is trained on, in a fixed order: bundled, dev, train."""
    return bundled_examples() + [(i["text"], i["pattern"]) for i in training_items()]


VECTOR_SET = training_vectors.VectorSet(
    name="patterns",
    kind="query",
    sources=lambda: [p for p in (EXAMPLES_FILE, DEV_FILE, TRAIN_FILE) if p.is_file()],
    texts=lambda: [t for t, _ in training_examples()],
)


def train_pattern_model(pairs: list[tuple[str, str]], vectors: np.ndarray | None = None) -> BlendedModel:
    """The blended model; `vectors` (one embedding per pair) None → the term model alone."""
    texts, labels = [t for t, _ in pairs], [p for _, p in pairs]
    terms = train_softmax(
        texts, labels, featurizer=pattern_features, l2=L2, label_order=pattern_ids(), min_count=MIN_COUNT
    )
    if vectors is None:
        return BlendedModel(terms)
    dense = train_dense_softmax(vectors, labels, l2=DENSE_L2, label_order=pattern_ids())
    return BlendedModel(terms, dense, VECTOR_SET.embed, TERM_WEIGHT)


@lru_cache(maxsize=1)
def pattern_model() -> BlendedModel:
    pairs = training_examples()
    vectors = training_vectors.load(VECTOR_SET, [t for t, _ in pairs]) if embeddings.enabled() else None
    return train_pattern_model(pairs, vectors)


# fewer words than this and no cue: a topic, not a question ("soja cerrado"); the model's
# probabilities there only echo its priors, so the route asks instead of trusting them
MIN_WORDS_WITHOUT_CUE = 3


def classify(message: str, model: BlendedModel | None = None, *, vector: np.ndarray | None = None) -> PatternMatch:
    """The message's pattern; `vector` is its embedding when the caller already has it."""
    probs = (model or pattern_model()).probabilities(message, vector)
    text = normalize(message)
    too_short = len(_WORDS.findall(text)) < MIN_WORDS_WITHOUT_CUE and not any(
        rx.search(text) for _, rx in _compiled_cues()
    )
    order = pattern_ids()
    ranked = sorted(probs.items(), key=lambda kv: (-kv[1], order.index(kv[0])))
    (top_id, top), (second_id, second) = ranked[0], ranked[1]
    cfg = patterns_file()
    margin = round(top - second, 4)
    unsure = too_short or top < float(cfg["min_confidence"]) or margin < float(cfg["close_margin"])
    scores = {k: round(v, 4) for k, v in probs.items()}
    return PatternMatch(top_id, round(top, 2), scores, fallback=unsure, runner_up=second_id, margin=margin)
