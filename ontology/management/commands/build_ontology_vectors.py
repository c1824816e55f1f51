import time

from django.core.management.base import BaseCommand, CommandError

from common.text import embeddings
from ontology.routing import classifier, patterns
from ontology.routing import vectors as training_vectors

VECTOR_SETS = {
    "patterns": patterns.VECTOR_SET,
    "chunks": classifier.VECTOR_SET,
    "chunk_sentences": classifier.SENTENCE_VECTOR_SET,
}


class Command(BaseCommand):
    help = (
        "Embed the ontology classifiers' training texts into ontology/data/vectors/ (run after "
        "editing pattern_examples.yaml, chunks.jsonl, eval/*.dev.* or train/*, then commit the files)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="only say whether the committed vectors are current")
        parser.add_argument("--set", choices=sorted(VECTOR_SETS), action="append", dest="sets")

    def handle(self, *args, **options):
        chosen = [VECTOR_SETS[name] for name in (options["sets"] or sorted(VECTOR_SETS))]
        if options["check"]:
            stale = {s.name: training_vectors.stale_reasons(s) for s in chosen}
            stale = {name: reasons for name, reasons in stale.items() if reasons}
            if stale:
                detail = "; ".join(f"{name}: {', '.join(reasons)}" for name, reasons in sorted(stale.items()))
                raise CommandError(f"stale ontology vectors ({detail}); run manage.py build_ontology_vectors")
            self.stdout.write("ontology vectors are current")
            return
        if not embeddings.available():
            raise CommandError("the embedding model is off or unavailable (CONTEXTO_EMBEDDINGS)")
        started = time.monotonic()
        counts = training_vectors.build(chosen)
        elapsed = time.monotonic() - started
        summary = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        self.stdout.write(f"embedded {summary} in {elapsed:.1f} s ({embeddings.MODEL_ID})")
