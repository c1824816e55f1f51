"""The held-out narrative set (written independently of the checker): verdict
agreement per category. dev.json is in-sample (the checker was tuned on it);
test.json is only reported, never tuned on. The thresholds are the issue's
targets, kept as a guard against regressions."""

from django.core.management import call_command

from explanations.evaluation import DEV, TEST, evaluate, load


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


def test_the_evaluation_command_prints_figures_per_category_and_no_narrative(capsys):
    call_command("evaluate_narratives", "--split", "dev")
    out = capsys.readouterr().out
    assert "kinds" in out and "attribution" in out and "%" in out
    for case in load(DEV)[:10]:
        assert case["narrative"][:30] not in out
