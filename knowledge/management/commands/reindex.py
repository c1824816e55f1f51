from django.core.management.base import BaseCommand

from knowledge.routing_service import reindex


class Command(BaseCommand):
    help = "Rebuild the knowledge router index now; running processes rebuild theirs on their next question."

    def handle(self, *args, **options):
        index = reindex()
        self.stdout.write(
            f"Router index rebuilt: catalog v{index.version}, {len(index)} entries, "
            f"{len(index.bm25.vocabulary)} terms, {index.build_ms:.1f} ms."
        )
