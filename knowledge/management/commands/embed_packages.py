from django.core.management.base import BaseCommand

from knowledge.embeddings import embedding_backfill
from knowledge.catalog import get_active_catalog
from knowledge.retrieval.background import background_matrix, questions_matrix


class Command(BaseCommand):
    help = (
        "Compute the passage vector (the router's dense signal) of every active package's current revision "
        "that lacks one of the current model, and the vectors of the background questions and of the catalog's "
        "out-of-scope questions (kept under the var dir, so the first route of a process does not embed them); "
        "with CONTEXTO_EMBEDDINGS=off it does nothing."
    )

    def handle(self, *args, **options):
        counts = embedding_backfill()
        if counts["unavailable"]:
            self.stdout.write("Embeddings are switched off or the model is missing: nothing computed.")
            return
        self.stdout.write(f"Embedded {counts['embedded']} revision(s); {counts['skipped']} already had a vector.")
        matrix = background_matrix()
        if matrix is not None:
            self.stdout.write(f"Background questions: {len(matrix)} vectors ready.")
        own = get_active_catalog().out_of_scope
        matrix = questions_matrix(own) if own else None
        if matrix is not None:
            self.stdout.write(f"Out-of-scope questions: {len(matrix)} vector{'s' if len(matrix) != 1 else ''} ready.")
