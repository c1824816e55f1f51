from django.core.management.base import BaseCommand, CommandError

from accounts.models import Tenant
from conversations.demo import demo_workspace_ensure


class Command(BaseCommand):
    help = (
        "Load the demo's semantic registry example (knowledge/catalog_demo/semantic_registry.yaml) and grant "
        "the demo's work-permit records to a tenant, so the README's context examples work before /demo/ is opened."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", default="demo")

    def handle(self, *args, tenant, **options):
        tenant_obj = Tenant.objects.filter(slug=tenant).first()
        if tenant_obj is None:
            raise CommandError(f"Unknown tenant '{tenant}'.")
        demo_workspace_ensure(acting_user=None, tenant=tenant_obj)
        self.stdout.write(f"Demo workspace ready for tenant '{tenant}'.")
