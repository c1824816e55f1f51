from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import transaction

from ontology import loaders
from ontology.models import MetadataSchema, OntologyClass, Skill
from ontology.routing.data import SAMPLE_CHUNKS_FILE


class Command(BaseCommand):
    help = "Load (or refresh) the bundled ontology classes, skills and metadata schema; optionally the sample chunks."

    def add_arguments(self, parser):
        parser.add_argument("--sample-chunks", action="store_true", help="also ingest ontology/data/chunks.jsonl")
        parser.add_argument("--validator", help="curator username with validate_critical_chunk (for critical chunks)")

    def handle(self, *args, **options):
        with transaction.atomic():
            classes = loaders.load_classes(OntologyClass)
            skills = loaders.load_skills(Skill, OntologyClass)
            version = loaders.load_schema(MetadataSchema)
        self.stdout.write(f"ontology: {classes} classes, {skills} skills, schema {version}")
        if options["sample_chunks"]:
            extra = ["--validator", options["validator"]] if options["validator"] else []
            call_command(
                "ingest_chunks",
                str(SAMPLE_CHUNKS_FILE),
                "--no-progress",
                *extra,
                stdout=self.stdout,
                stderr=self.stderr,
            )
