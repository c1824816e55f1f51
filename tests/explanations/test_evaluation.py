"""The held-out narrative set (written independently of the checker): verdict
agreement per category. dev.json is in-sample (the checker was tuned on it);
test.json is only reported, never tuned on. The thresholds are the issue's
targets, kept as a guard against regressions."""

from django.core.management import call_command

from explanations.entities import result_meaning
from explanations.evaluation import DEV, TEST, evaluate, facts_from_payload, load
from explanations.llm_client import _offline_narrative
from explanations.numbers import check_narrative
from explanations.prompts import build_prompt, citable_numbers


def test_targets_on_the_held_out_test_split():
    report = evaluate(load(TEST))
    assert report.total >= 60
    for category in ("kinds", "exactness"):
        assert report.rate(category) >= 0.98, (category, report.by_category[category])
    for category in ("attribution", "direction"):
        assert report.rate(category) >= 0.90, (category, report.by_category[category])
    assert report.false_passes["pii"] == 0


def test_dev_split_in_sample():
    report = evaluate(load(DEV))
    assert report.rate() >= 0.98
    # Rejections also name the numbers the writer marked (by overlap of spans).
    assert report.spans_agreed >= 0.95 * report.spans_checked


def test_the_evaluation_command_prints_figures_per_category_and_no_narrative(capsys):
    call_command("evaluate_narratives", "--split", "dev")
    out = capsys.readouterr().out
    assert "kinds" in out and "attribution" in out and "%" in out
    for case in load(DEV)[:10]:
        assert case["narrative"][:30] not in out


def test_the_offline_narrator_passes_its_own_check_on_every_dev_result():
    # Embedded mode narrates from the prompt's list: counts, currencies, points, quarters and all.
    for case in load(DEV):
        facts = facts_from_payload(case["result"])
        citable = citable_numbers(facts)
        text = _offline_narrative(build_prompt(facts, citable))
        check = check_narrative(text, citable, rounding=facts.rounding, meaning=result_meaning(facts))
        assert check.passed, (case["id"], [(n.text, n.reason) for n in check.unmatched])
