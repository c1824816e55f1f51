"""The study behind the "questions" signal: the accepted example questions' *words* in the lexical side
of the router, measured before it was built (the shipped signal is ``signals._questions_signal`` over
``questions.QuestionsIndex``, the router's BM25+, chosen with ``tune.py --grid questions``; this script
keeps the study's rank-bm25 Okapi version, on entries without ``example_questions`` so the shipped
signal stays silent while it runs).

Two ways, each scored on the ten dev splits with the stand-in proposals (example_questions.proposed.json,
every one accepted), everything else as shipped (docs/retrieval.md, "The example questions' words in
BM25"):

- ``--field``: the questions put into each entry's ``search_terms`` BM25F field, at field weights
  0.3 / 0.6 / 1.0 (doc2query for words; the field counts for coverage like every other);
- ``--signal``: a rank-only signal, BM25 (rank-bm25's Okapi over the router's analyzer) over each
  entry's questions alone, its top k with a score ≥ a share of the best, fused by weighted RRF and
  never making an entry eligible for full nor counted in coverage. The signal is patched into
  ``signals._corpus_signals`` for the run: it exists only here. With ``--one-part`` it fires only
  for a message of one part (the message's parts are counted by patching the router's split).

Both print each setting's in-sample sum over the catalogs and the leave-one-catalog-out choice (one
fold per catalog: the setting best on the other nine, scored on the held-out one), with "off" among
the settings. Dev splits only.

Usage:  python -m knowledge.evaluation.question_words --field | --signal [--one-part]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from common.text import analyze  # noqa: E402
from knowledge.evaluation import tune  # noqa: E402
from knowledge.offline_catalog import load_package_folder  # noqa: E402
from knowledge.retrieval import index as router_index  # noqa: E402
from knowledge.retrieval import signals as router_signals  # noqa: E402
from knowledge.retrieval.entries import DEFAULT_FIELD_WEIGHTS, RouterConfig  # noqa: E402

FIGURES = ("hit@1", "usable", "ood", "multi", "par_en", "par_es", "unexpected_full")


class QuestionsSignal:
    """The rank-only signal, patched around ``_corpus_signals`` while ``on``."""

    def __init__(self, one_part: bool = False):
        self.catalog: str | None = None
        self.top_k, self.share = 5, 0.0
        self.one_part, self.parts = one_part, 1
        self._split = router_index.split_parts_analyzed
        self._bm25: dict[tuple, BM25Okapi | None] = {}
        self._corpus = router_signals._corpus_signals

    def __call__(self, index, signals, content, query) -> None:
        self._corpus(index, signals, content, query)
        if self.one_part and self.parts > 1:
            return
        if not index.config.weights.get("questions") or not query:
            return
        bm25 = self._index(index)
        if bm25 is None:
            return
        scores = bm25.get_scores(list(query))
        best = scores.max()
        if best <= 0:
            return
        order = np.argsort(-scores, kind="stable")[: self.top_k]
        ranked = [int(i) for i in order if scores[i] > 0 and scores[i] >= self.share * best]
        if ranked:
            signals.rankings["questions"] = ranked

    def split(self, message):
        """The router's split, counting the message's parts."""
        parts = self._split(message)
        self.parts = len(parts) if parts else 1
        return parts

    def _index(self, index):
        key = (self.catalog, id(index))
        if key not in self._bm25:
            asked = tune.EXAMPLES.get(self.catalog) or {}
            docs = [analyze(" ".join(asked.get(e.package_id, ()))) for e in index.entries]
            self._bm25[key] = BM25Okapi(docs) if any(docs) else None
        return self._bm25[key]


def _score(data, label, make) -> tuple:
    """One setting over every catalog: ``make(name, entries)`` → (config, entries)."""
    scores, figures = {}, {}
    for name, (entries, queries) in data.items():
        config, used = make(name, entries)
        report = tune.run(config, name, used, queries)
        scores[name] = tune.objective(report)
        figures[name] = tune.figures_of(report)
    print(label, f"in-sample sum={sum(scores.values()):.3f}", flush=True)
    return label, scores, figures


def _loco(rows) -> dict:
    held_out, sums = {}, dict.fromkeys(("objective", *FIGURES), 0.0)
    for held in rows[0][1]:
        label, scores, figures = max(rows, key=lambda r: sum(s for n, s in r[1].items() if n != held))
        held_out[held] = label
        sums["objective"] += scores[held]
        for k in FIGURES:
            sums[k] += figures[held].get(k) or 0.0
    return {"chosen": held_out, "held_out_sums": {k: round(v, 3) for k, v in sums.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    way = parser.add_mutually_exclusive_group(required=True)
    way.add_argument("--field", action="store_true", help="the questions in the search_terms BM25F field")
    way.add_argument("--signal", action="store_true", help="a rank-only BM25 signal over the questions")
    parser.add_argument("--one-part", action="store_true", help="with --signal: only for messages of one part")
    args = parser.parse_args()
    if args.one_part and not args.signal:
        parser.error("--one-part goes with --signal")
    tune.EXAMPLES.update({n: tune.example_questions(n) for n in tune.TUNING_INPUTS})
    data = {n: (load_package_folder(p), tune.tuning_questions(n)) for n, (p, _) in tune.TUNING_INPUTS.items()}
    base = RouterConfig()
    base = dataclasses.replace(base, weights={**base.weights, "questions": 0.0})  # "off": the study's baseline
    rows = [_score(data, "off", lambda name, entries: (base, entries))]
    if args.field:
        for weight in (0.3, 0.6, 1.0):

            def make(name, entries, weight=weight):
                asked = tune.EXAMPLES.get(name) or {}
                used = [dataclasses.replace(e, search_terms=tuple(asked.get(e.package_id, ()))) for e in entries]
                return replace_fields(base, weight), used

            rows.append(_score(data, f"field weight {weight}", make))
    else:
        signal = QuestionsSignal(one_part=args.one_part)
        router_signals._corpus_signals = signal
        router_index.split_parts_analyzed = signal.split
        try:
            for top_k, share in ((5, 0.0), (5, 0.5), (3, 0.0), (3, 0.5), (1, 0.0)):
                for weight in (0.5, 1.0, 2.0):

                    def make(name, entries, weight=weight):
                        signal.catalog = name
                        return dataclasses.replace(base, weights={**base.weights, "questions": weight}), entries

                    signal.top_k, signal.share = top_k, share
                    rows.append(_score(data, f"top {top_k}, share {share}, weight {weight}", make))
        finally:
            router_signals._corpus_signals = signal._corpus
            router_index.split_parts_analyzed = signal._split
    print(json.dumps(_loco(rows), indent=1))


def replace_fields(config: RouterConfig, weight: float) -> RouterConfig:
    return dataclasses.replace(config, field_weights={**DEFAULT_FIELD_WEIGHTS, "search_terms": weight})


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
