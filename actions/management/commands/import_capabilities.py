from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from actions.exceptions import CapabilityFileError
from actions.registry import capability_registry_import


class Command(BaseCommand):
    help = "Create or update capabilities from a YAML or JSON file (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)

    def handle(self, *args, path: Path, **options):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
        try:
            counts = capability_registry_import(acting_user=None, text=text)
        except CapabilityFileError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"{counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged."
            )
        )
