"""Re-enqueue results whose explanation never reached the broker.

Celery beat runs the same sweep every EXPLANATION_SWEEP_INTERVAL seconds;
this command is for deployments without beat, e.g. a cron line:
    */5 * * * *  cd /srv/contexto && .venv/bin/python manage.py sweep_pending_explanations
"""

from datetime import timedelta

from django.core.management.base import BaseCommand

from explanations.services import results_sweep_pending


class Command(BaseCommand):
    help = "Re-enqueue the explanation task of pending results (broker down at POST time, lost messages)."

    def add_arguments(self, parser):
        parser.add_argument("--grace", type=int, default=60, help="Seconds a pending result waits first (default 60).")
        parser.add_argument("--stale-minutes", type=int, default=30, help="Re-enqueue queued results this old.")
        parser.add_argument("--limit", type=int, default=500)

    def handle(self, *args, grace, stale_minutes, limit, **options):
        count = results_sweep_pending(
            pending_grace=timedelta(seconds=grace),
            queued_stale_after=timedelta(minutes=stale_minutes),
            limit=limit,
        )
        self.stdout.write(f"enqueued {count}")
