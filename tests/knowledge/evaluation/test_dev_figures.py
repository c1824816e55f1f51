"""The router's figures on the dev splits (in-sample for the settings chosen on them) do not regress.

Floors sit just under the figures measured when the settings were chosen
(docs/retrieval.md); the baseline before the lexicon was 0.68 en÷pt parity on
hr, 0.64 / 0.52 usable on saas / hr.
"""

from dataclasses import replace

import pytest

from knowledge.evaluation.tune import run
from knowledge.retrieval import RouterConfig


def figures(name, **config):
    report = run(replace(RouterConfig(), **config), name)
    k = report.by_kind()["all"]
    return k, report.parity()


def test_the_sample_catalog_keeps_its_figures():
    k, parity = figures("sample")
    assert k["hit@1"]["rate"] >= 0.95 and k["usable"]["rate"] >= 0.95
    assert k["ood_precision"]["rate"] >= 0.85
    assert parity["en"]["ratio"] >= 0.95 and parity["es"]["ratio"] >= 0.95


@pytest.mark.parametrize("name,usable,parity_floor", [("saas", 0.70, 0.75), ("hr", 0.60, 0.85)])
def test_held_out_dev_figures_stay_above_the_floor(name, usable, parity_floor):
    k, parity = figures(name)
    assert k["usable"]["rate"] >= usable
    assert k["ood_precision"]["rate"] >= 0.95
    assert min(parity["en"]["ratio"], parity["es"]["ratio"]) >= parity_floor


def test_without_the_lexicon_english_parity_falls_when_few_questions_are_embedded():
    # Gate "bm25_strong": the question is embedded only if BM25 found nothing strong. With e5 alone,
    # hr's en parity without the lexicon was under the 0.85 floor; with e5 + USE it is 0.86, still
    # below the parity the lexicon gives.
    _, with_lexicon = figures("hr", dense_gate="bm25_strong")
    _, without = figures("hr", lexicon_weight=0.0, dense_gate="bm25_strong")
    assert without["en"]["ratio"] < with_lexicon["en"]["ratio"]


def test_the_lexicon_still_lifts_english_and_spanish_when_most_questions_are_embedded():
    # Every part is embedded, so the dense signal carries part of what the lexicon did (hr en parity
    # without the lexicon: 0.82 under "bm25_strong", 0.89 under "covered"); the lexicon still adds to
    # it, for English and for Spanish questions alike. Measured on each language's own questions: since
    # the one-part meaning check (eighteenth round) the en ÷ pt parity ratio is 1.00 with the lexicon and
    # without (the check lets one more English group reach its entry without it: 27 -> 28 of 28), while
    # English questions delivered in usable form still fall without it (24 -> 23 of 32), Spanish ones
    # too (25 -> 23) and Spanish parity with them (1.03 -> 1.00).
    with_lexicon = run(RouterConfig(), "hr")
    without = run(replace(RouterConfig(), lexicon_weight=0.0), "hr")

    def usable(report, lang):
        return sum(o.usable for o in report.outcomes if o.expected and o.lang == lang)

    assert usable(without, "en") < usable(with_lexicon, "en")
    assert usable(without, "es") < usable(with_lexicon, "es")
    assert without.parity()["es"]["ratio"] < with_lexicon.parity()["es"]["ratio"]


def _kind_hits(name, kind, **config):
    report = run(replace(RouterConfig(), **config), name)
    return sum(o.hit for o in report.outcomes if o.kind == kind)


@pytest.mark.parametrize("name", ["hr", "university"])
def test_the_dense_signal_lifts_paraphrases_and_typos(name):
    # Dev figures (in-sample for the dense settings): paraphrases and chat typos are what words alone miss.
    lexical = {"weights": {**RouterConfig().weights, "dense": 0.0}}
    for kind in ("paraphrase", "typo"):
        assert _kind_hits(name, kind) > _kind_hits(name, kind, **lexical), kind


def test_the_dense_signal_keeps_the_held_out_dev_floors_higher():
    k, _ = figures("hr")
    assert k["hit@1"]["rate"] >= 0.74 and k["usable"]["rate"] >= 0.66
