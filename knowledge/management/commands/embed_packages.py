from django.core.management.base import BaseCommand

from knowledge.embeddings import embedding_backfill


class Command(BaseCommand):
    help = (
        "Compute the passage vector (the router's dense signal) of every active package's current revision "
        "that lacks one of the current model; with CONTEXTO_EMBEDDINGS=off it does nothing."
    )

    def handle(self, *args, **options):
        counts = embedding_backfill()
        if counts["unavailable"]:
            self.stdout.write("Embeddings are switched off or the model is missing: nothing computed.")
            return
        self.stdout.write(f"Embedded {counts['embedded']} revision(s); {counts['skipped']} already had a vector.")
