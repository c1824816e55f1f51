import json

from django.core.management.base import BaseCommand, CommandError

from knowledge.retrieval.evaluation import evaluate, load_queries
from knowledge.routing_service import route_context


class Command(BaseCommand):
    help = (
        "Measure the router on a labeled query file: hit@1, recall in full, recall in full or listed, "
        "negative precision (see knowledge/evaluation/queries.json for the format)."
    )

    def add_arguments(self, parser):
        parser.add_argument("queries", help="JSON list of {query, expected, lang?, type?, context?}")
        parser.add_argument("--verbose", action="store_true", help="Print every query that missed.")
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")

    def handle(self, *args, **options):
        try:
            queries = load_queries(options["queries"])
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {options['queries']}: {exc}") from exc

        def route(row):
            return route_context(message=row["query"], semantic_context=row.get("context"), use_cache=False)

        ev = evaluate(queries, route)
        summary = ev.summary()
        if options["json"]:
            self.stdout.write(json.dumps(summary))
            return
        self.stdout.write(
            f"queries                    {ev.queries} ({ev.positives} answerable, {ev.negatives} out of domain)"
        )
        self.stdout.write(f"hit@1                      {ev.hit_at_1:.3f}")
        self.stdout.write(f"recall in full             {ev.recall_full:.3f}")
        self.stdout.write(f"recall in full or listed   {ev.recall_full_or_listed:.3f}")
        self.stdout.write(f"negative precision         {ev.negative_precision:.3f}")
        self.stdout.write(f"mean full bodies per query {ev.mean_full:.2f}")
        for kind, (ok, total) in sorted(ev.by_type.items()):
            self.stdout.write(f"  {kind:<16} {ok}/{total}")
        if options["verbose"]:
            for f in ev.failures:
                self.stdout.write(
                    f"MISS {f['query']!r} expected={f['expected']} full={f['full']} ranked={f.get('ranked', [])}"
                )
