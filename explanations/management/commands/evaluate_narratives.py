"""Verdict agreement of the narrative check on a labeled set, per category.

    manage.py evaluate_narratives            # dev (in-sample: the checker was tuned on it)
    manage.py evaluate_narratives --split test
    manage.py evaluate_narratives --file other.json --misses

Prints figures only (never a narrative): agreement per category, false passes
(a rejected case verified) and false rejections. --misses adds the ids.
"""

from django.core.management.base import BaseCommand

from explanations.evaluation import DEV, TEST, evaluate, load


class Command(BaseCommand):
    help = "Verdict agreement of the narrative number check on a labeled set, per category."

    def add_arguments(self, parser):
        parser.add_argument("--split", choices=["dev", "test"], default="dev")
        parser.add_argument("--file", help="a JSON list of cases instead of a split")
        parser.add_argument("--misses", action="store_true", help="list the ids of disagreeing cases")

    def handle(self, *args, split, file, misses, **options):
        path = file or (DEV if split == "dev" else TEST)
        report = evaluate(load(path))
        self.stdout.write(f"{path}: {report.agreed}/{report.total} = {report.rate():.1%}")
        self.stdout.write(f"{'category':<12} {'agree':>7} {'rate':>7} {'false pass':>11} {'false reject':>13}")
        for category in sorted(report.by_category):
            agreed, total = report.by_category[category]
            self.stdout.write(
                f"{category:<12} {agreed:>3}/{total:<3} {report.rate(category):>7.1%} "
                f"{report.false_passes[category]:>11} {report.false_rejects[category]:>13}"
            )
        if report.spans_checked:
            self.stdout.write(
                f"rejected cases naming the expected numbers: {report.spans_agreed}/{report.spans_checked}"
            )
        if misses and report.misses:
            self.stdout.write("misses: " + ", ".join(report.misses))
