from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from knowledge.exceptions import PackageImportError
from knowledge.services import packages_import


class Command(BaseCommand):
    help = "Import a folder of package files. Every file is validated first: one bad file, nothing imported."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument("--dry-run", action="store_true", help="Validate and report, write nothing")
        parser.add_argument("--note", default="", help="Revision note for every change")

    def handle(self, *args, directory: Path, dry_run: bool, note: str, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory}: not a folder")
        try:
            summary = packages_import(acting_user=None, directory=directory, dry_run=dry_run, note=note)
        except PackageImportError as exc:
            raise CommandError("Nothing imported:\n  " + "\n  ".join(exc.errors)) from exc
        prefix = "Dry run, nothing written: " if dry_run else "Imported: "
        self.stdout.write(prefix + summary.as_line() + ".")
        for label, ids in (("created", summary.created), ("updated", summary.updated)):
            if ids:
                self.stdout.write(f"  {label}: {', '.join(ids)}")
