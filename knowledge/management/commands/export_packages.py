from pathlib import Path

from django.core.management.base import BaseCommand

from knowledge.services import packages_export


class Command(BaseCommand):
    help = "Write the active catalog as package files that import back identically."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--include-inactive", action="store_true")

    def handle(self, *args, directory: Path, include_inactive: bool, **options):
        written = packages_export(directory=directory, include_inactive=include_inactive)
        self.stdout.write(f"Exported {len(written)} packages to {directory}.")
