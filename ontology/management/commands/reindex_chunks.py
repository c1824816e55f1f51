from django.core.management.base import BaseCommand

from ontology.services import chunks_reindex


class Command(BaseCommand):
    help = "Re-validate chunks marked for re-indexing (after a schema change) against the current schema."

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="every chunk, not only the marked ones")

    def handle(self, *args, **options):
        counts = chunks_reindex(acting_user=None, everything=options["all"])
        self.stdout.write(f"reindexed {counts['reindexed']}, failed {counts['failed']}")
