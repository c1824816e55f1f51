import json
from dataclasses import replace

from django.core.management.base import BaseCommand, CommandError

from knowledge.package_files import PackageFileError
from knowledge.retrieval.evaluation import evaluate, evaluate_report, format_report, load_queries
from knowledge.routing_service import SemanticContext, route_context, router_config


class Command(BaseCommand):
    help = (
        "Measure the router on a labeled question file, per question kind: hit@1, expected delivered in usable "
        "form, expected anywhere, out-of-domain precision and en/es ÷ pt parity, with 95 % intervals. "
        "--catalog DIR measures a folder of package files in memory instead of the database catalog "
        "(see docs/retrieval.md, 'Measuring your own catalog')."
    )

    def add_arguments(self, parser):
        parser.add_argument("queries", help="JSON list of {query, expected, lang?, type?, group?, context?}")
        parser.add_argument(
            "--catalog",
            metavar="DIR",
            help="Folder of package .md files (or with a packages/ subfolder), loaded in memory; "
            "the database catalog is neither read nor written.",
        )
        parser.add_argument(
            "--search-terms",
            metavar="FILE",
            help='With --catalog: JSON of search terms per package ({"PKG": {"en": [...], "es": [...]}}), '
            "indexed as accepted terms are: measure a model's proposals before curators accept them.",
        )
        parser.add_argument(
            "--search-terms-languages",
            metavar="LANGS",
            help="Comma-separated languages of --search-terms to keep (default: every list in the file).",
        )
        parser.add_argument(
            "--example-questions",
            metavar="FILE",
            help='With --catalog: JSON of example questions per package ({"PKG": {"pt": [...], "en": [...], '
            '"es": [...]}}), blended into the packages\' vectors as accepted questions are.',
        )
        parser.add_argument(
            "--out-of-scope",
            metavar="FILE",
            help='With --catalog: JSON of questions no package answers ({"pt": [...], "en": [...], "es": [...]} '
            "or a list), used as curators' out-of-scope sets are.",
        )
        parser.add_argument("--verbose", action="store_true", help="Print every question that missed.")
        parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")

    def handle(self, *args, **options):
        if options["verbose"] and ".test." in str(options["queries"]):
            # A test split is reported, never read: printing its misses is how tuning on it starts.
            raise CommandError("--verbose is refused on a test split (*.test.json): report its figures only")
        try:
            queries = load_queries(options["queries"])
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {options['queries']}: {exc}") from exc

        route, kinds = self._router(options)
        unknown = sorted({e for row in queries for e in row["expected"]} - set(kinds))
        if unknown:
            raise CommandError(f"expected IDs not in the catalog: {', '.join(unknown[:10])}")
        results = {}

        def remembered(row):
            result = results.get(id(row))
            if result is None:
                result = results[id(row)] = route(row)
            return result

        ev = evaluate(queries, remembered)
        report = evaluate_report(queries, remembered, kinds)
        if options["json"]:
            self.stdout.write(json.dumps({**ev.summary(), **report.summary()}))
            return
        self.stdout.write(
            f"queries                    {ev.queries} ({ev.positives} answerable, {ev.negatives} out of domain)"
        )
        self.stdout.write(f"hit@1                      {ev.hit_at_1:.3f}")
        self.stdout.write(f"recall in full             {ev.recall_full:.3f}")
        self.stdout.write(f"recall in full or listed   {ev.recall_full_or_listed:.3f}")
        self.stdout.write(f"negative precision         {ev.negative_precision:.3f}")
        self.stdout.write(f"mean full bodies per query {ev.mean_full:.2f}")
        self.stdout.write("")
        self.stdout.write("per question kind: rate [95 % Wilson interval] ok/n; parity: bootstrap 95 % over groups")
        for line in format_report(report):
            self.stdout.write(line)
        if options["verbose"]:
            for o in report.outcomes:
                if not (o.hit and o.usable):
                    self.stdout.write(
                        f"MISS [{o.kind}/{o.lang}] {o.query!r} expected={o.expected} full={o.full} ranked={o.ranked}"
                    )

    def _router(self, options):
        """How each question is routed, and every package's kind: a folder in memory or the database catalog."""
        if options["search_terms"] and not options["catalog"]:
            raise CommandError("--search-terms needs --catalog (the database catalog indexes its accepted terms)")
        if options["example_questions"] and not options["catalog"]:
            raise CommandError("--example-questions needs --catalog (the database catalog embeds its accepted ones)")
        if options["out_of_scope"] and not options["catalog"]:
            raise CommandError(
                "--out-of-scope needs --catalog (the database catalog uses its active out-of-scope sets)"
            )
        if options["catalog"]:
            from knowledge.offline_catalog import (
                example_questions_file,
                folder_index,
                out_of_scope_file,
                search_terms_file,
            )

            terms = None
            if options["search_terms"]:
                langs = options["search_terms_languages"]
                try:
                    terms = search_terms_file(options["search_terms"], tuple(langs.split(",")) if langs else None)
                except (OSError, ValueError) as exc:
                    raise CommandError(f"Cannot read {options['search_terms']}: {exc}") from exc
            examples = None
            if options["example_questions"]:
                try:
                    examples = example_questions_file(options["example_questions"])
                except (OSError, ValueError) as exc:
                    raise CommandError(f"Cannot read {options['example_questions']}: {exc}") from exc
            config = router_config()
            if options["out_of_scope"]:
                try:
                    config = replace(config, out_of_scope=out_of_scope_file(options["out_of_scope"]))
                except (OSError, ValueError) as exc:
                    raise CommandError(f"Cannot read {options['out_of_scope']}: {exc}") from exc
            try:
                index = folder_index(options["catalog"], config, search_terms=terms, examples=examples)
            except (OSError, ValueError, PackageFileError) as exc:
                raise CommandError(f"Cannot load the catalog {options['catalog']}: {exc}") from exc

            def route(row):
                ctx = SemanticContext.coerce(row.get("context"))
                return index.route(row["query"], focus=ctx.focus, parents=ctx.parents, page=ctx.page)

            kinds = {e.package_id: e.kind for e in index.entries}
        else:
            from knowledge.catalog import get_active_catalog

            def route(row):
                return route_context(message=row["query"], semantic_context=row.get("context"), use_cache=False)

            kinds = {e.package_id: e.kind for e in get_active_catalog().entries}

        return route, kinds
