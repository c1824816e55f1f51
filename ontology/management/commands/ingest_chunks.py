"""ingest_chunks FILE.jsonl — one chunk per line, each line in its own transaction.

A bad line is reported with its number and the reason and changes nothing; the other
lines are ingested. Exit status 1 when any line failed (after processing all of them).
"""

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from common.exceptions import ApplicationError
from ontology.services import chunk_ingest
from ontology.tasks import summary_tree_build_task


class Command(BaseCommand):
    help = "Ingest chunks from a JSON Lines file (seed metadata schema), with a progress bar and a summary."

    def add_arguments(self, parser):
        parser.add_argument("path", help="JSON Lines file: one {chunk_id, texto, <metadata>} object per line")
        parser.add_argument(
            "--validator",
            help="username of a curator with validate_critical_chunk: "
            "critical-class chunks are validated by them and indexed",
        )
        parser.add_argument("--no-index", action="store_true", help="stop every chunk at 'tagged'")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (logs, CI)")

    def handle(self, *args, path, validator=None, no_index=False, no_progress=False, **options):
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"No such file: {path}")
        curator = None
        if validator:
            curator = get_user_model().objects.filter(username=validator).first()
            if curator is None:
                raise CommandError(f"Unknown validator user: {validator}")
            if not curator.has_perm("ontology.validate_critical_chunk"):
                raise CommandError(f"User {validator} lacks ontology.validate_critical_chunk")
        # bytes, split on \n / \r only: a line that is not UTF-8 is one bad line (not a crash of
        # the whole run), and a U+2028 inside a JSON string does not split a record in two
        lines = file.read_bytes().splitlines()
        summary = {"created": 0, "updated": 0, "unchanged": 0, "indexed": 0, "awaiting_curator": 0, "failed": 0}
        errors: list[str] = []
        bar = tqdm(lines, desc="chunks", unit="line", disable=no_progress, file=self.stderr._out)
        for number, line in enumerate(bar, start=1):
            if not line.strip():
                continue
            try:
                line = line.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                summary["failed"] += 1
                errors.append(f"line {number}: not UTF-8 (byte {exc.start + 1})")
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                summary["failed"] += 1
                errors.append(f"line {number}: invalid JSON: {exc.msg} (column {exc.colno})")
                continue
            try:
                result = chunk_ingest(acting_user=None, record=record, validator=curator, index=not no_index)
            except ApplicationError as exc:
                summary["failed"] += 1
                chunk_id = record.get("chunk_id") if isinstance(record, dict) else None
                errors.append(
                    f"line {number}" + (f" ({chunk_id})" if chunk_id else "") + f": {exc.code}: {exc.message}"
                )
                continue
            summary[result.action] += 1
            summary["indexed"] += result.state == "indexed"
            summary["awaiting_curator"] += result.awaiting_curator
        bar.close()
        if summary["indexed"]:
            # RAPTOR's summary tree follows the indexed chunks (a no-op when they did not change)
            summary_tree_build_task.delay()
        for error in errors:
            self.stderr.write(error)
        self.stdout.write(
            "ingested {created} created, {updated} updated, {unchanged} unchanged; {indexed} indexed, "
            "{awaiting_curator} awaiting curator validation; {failed} failed".format(**summary)
        )
        if summary["failed"]:
            raise CommandError(f"{summary['failed']} line(s) failed", returncode=1)
