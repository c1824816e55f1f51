"""Query-pattern classifier (seed 002, the six ontological patterns): a learned model.

A softmax regression (``textmodel``) over the message's words, bigrams, stems and
character 4-grams, plus one feature per hand-written cue of ``data/patterns.yaml`` that
matches (the old rules are now evidence the model weighs, not the decision). It is
trained once per process from files in the repo, no network:

* ``data/pattern_examples.yaml`` — questions the maintainers wrote;
* ``data/eval/patterns.dev.json`` — the dev split of an independent author's labeled set
  (``patterns.test.json`` is only ever evaluated, see ``ontology/tools/evaluate.py``).

Confidence is the top probability. When the top two are close (``close_margin``) or the
top is weak (``min_confidence``) the match says so: ``fallback: true`` with the
``runner_up``, and the router asks one short clarifying question instead of guessing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

import yaml

from .data import DATA_DIR, patterns_file
from .text import normalize
from .textmodel import SoftmaxModel, text_features, train_softmax

EVAL_DIR = DATA_DIR / "eval"
EXAMPLES_FILE = DATA_DIR / "pattern_examples.yaml"
DEV_FILE = EVAL_DIR / "patterns.dev.json"
L2 = 0.03


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


def training_examples(*, include_dev: bool = True) -> list[tuple[str, str]]:
    """(text, pattern) pairs the model is trained on: bundled examples + the dev split."""
    pairs: list[tuple[str, str]] = []
    with EXAMPLES_FILE.open(encoding="utf-8") as fh:
        for pattern, texts in yaml.safe_load(fh).items():
            pairs.extend((t, pattern) for t in texts)
    if include_dev and DEV_FILE.is_file():
        pairs.extend((item["text"], item["pattern"]) for item in json.loads(DEV_FILE.read_text(encoding="utf-8")))
    return pairs


def train_pattern_model(pairs: list[tuple[str, str]]) -> SoftmaxModel:
    return train_softmax(
        [t for t, _ in pairs], [p for _, p in pairs], featurizer=pattern_features, l2=L2, label_order=pattern_ids()
    )


@lru_cache(maxsize=1)
def pattern_model() -> SoftmaxModel:
    return train_pattern_model(training_examples())


# fewer words than this and no cue: a topic, not a question ("soja cerrado"); the model's
# probabilities there only echo its priors, so the route asks instead of trusting them
MIN_WORDS_WITHOUT_CUE = 3


def classify(message: str, model: SoftmaxModel | None = None) -> PatternMatch:
    probs = (model or pattern_model()).probabilities(message)
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
