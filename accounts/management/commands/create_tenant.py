from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Tenant
from accounts.services import tenant_get_or_create


class Command(BaseCommand):
    help = "Create a tenant (organization). Then: create_api_token USER --tenant SLUG."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="lower-case letters, digits and hyphens")
        parser.add_argument("--name", default="", help="display name (default: the slug)")

    def handle(self, *args, slug: str, name: str, **options):
        if Tenant.objects.filter(slug=slug).exists():
            raise CommandError(f"Tenant '{slug}' already exists.")
        try:
            tenant = tenant_get_or_create(slug=slug, name=name or slug)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from exc
        self.stdout.write(f"Tenant '{tenant.slug}' created.")
