from django.core.management.base import BaseCommand, CommandError

from knowledge.exceptions import PackageImportError
from knowledge.services import catalog_sync_bundled


class Command(BaseCommand):
    help = "Load the bundled Markdown catalog (KNOWLEDGE_CATALOG_DIR) into the database."

    def handle(self, *args, **options):
        try:
            summary = catalog_sync_bundled()
        except PackageImportError as exc:
            raise CommandError("Bundled catalog not loaded:\n  " + "\n  ".join(exc.errors)) from exc
        self.stdout.write(f"Bundled catalog: {summary.as_line()}.")
