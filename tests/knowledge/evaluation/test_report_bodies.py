"""The evaluation report counts the full bodies a question did not ask for (what usable cannot see)."""

from knowledge.retrieval.evaluation import QuestionOutcome, Report, format_report


def _outcome(kind, expected, full, hit=True, usable=True):
    return QuestionOutcome(
        query=f"{kind} {full}",
        kind=kind,
        lang="pt",
        group="",
        expected=expected,
        hit=hit,
        usable=usable,
        anywhere=True,
        full=full,
        ranked=full,
    )


def test_unexpected_full_bodies_are_counted_per_kind_and_overall():
    report = Report(
        [
            _outcome("direct", ["A"], ["A"]),
            _outcome("paraphrase", ["A"], ["A", "B", "C"]),  # usable, and two bodies nobody asked for
            _outcome("ood", [], ["B"], hit=False, usable=False),  # every body of an OOD question is unexpected
            _outcome("ood", [], []),
        ]
    )
    kinds = report.by_kind()
    assert kinds["direct"]["unexpected_full"] == {"n": 0, "full": 1, "per_question": 0.0, "share": 0.0}
    assert kinds["paraphrase"]["unexpected_full"] == {"n": 2, "full": 3, "per_question": 2.0, "share": 0.667}
    assert kinds["ood"]["unexpected_full"] == {"n": 1, "full": 1, "per_question": 0.5, "share": 1.0}
    assert kinds["all"]["unexpected_full"] == {"n": 3, "full": 5, "per_question": 0.75, "share": 0.6}
    # usable alone cannot tell the paraphrase's answer from a spray of bodies.
    assert kinds["paraphrase"]["usable"]["rate"] == kinds["direct"]["usable"]["rate"] == 1.0


def test_a_kind_without_full_bodies_has_no_share():
    kinds = Report([_outcome("ood", [], [])]).by_kind()
    assert kinds["all"]["unexpected_full"] == {"n": 0, "full": 0, "per_question": 0.0, "share": None}


def test_the_curators_table_prints_unexpected_bodies_per_question():
    lines = format_report(Report([_outcome("direct", ["A"], ["A", "B"]), _outcome("direct", ["A"], ["A"])]))
    assert lines[0].rstrip().endswith("unexpected full / q")
    row = next(line for line in lines if line.startswith("all"))
    assert row.rstrip().endswith("0.50 (1/3)")
