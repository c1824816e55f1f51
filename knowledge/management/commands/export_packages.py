from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.exceptions import InvalidPackageOperationError
from knowledge.services import packages_export


class Command(BaseCommand):
    help = "Write the active catalog as package files that import back identically."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--include-inactive", action="store_true")
        parser.add_argument(
            "--replace", action="store_true", help="Delete the folder's package files (*.md) before writing"
        )

    def handle(self, *args, directory: Path, include_inactive: bool, replace: bool, **options):
        try:
            written = packages_export(directory=directory, include_inactive=include_inactive, replace=replace)
        except InvalidPackageOperationError as exc:
            raise CommandError(f"{exc.message} (use --replace)") from exc
        self.stdout.write(f"Exported {len(written)} packages to {directory}.")
