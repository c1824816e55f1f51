from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Membership, Tenant
from accounts.services import api_token_create
from common.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Print an API token for USER, making the user a member of the tenant --tenant SLUG."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--tenant", required=True, help="Tenant slug")
        parser.add_argument("--create-user", action="store_true", help="Create the user if missing")
        parser.add_argument("--rotate", action="store_true", help="Replace an existing token")
        parser.add_argument(
            "--role",
            choices=[choice for choice, _ in Membership.Role.choices],
            default=None,
            help="member or admin (a tenant administrator, e.g. grants accessible entities); default: keep, new: member",
        )

    def handle(self, *args, username, tenant, create_user, rotate, role, **options):
        User = get_user_model()
        tenant_obj = Tenant.objects.filter(slug=tenant).first()
        if tenant_obj is None:
            raise CommandError(f"Unknown tenant '{tenant}'.")
        user = User.objects.filter(username=username).first()
        if user is None:
            if not create_user:
                raise CommandError(f"Unknown user '{username}' (use --create-user).")
            user = User.objects.create_user(username=username)
        try:
            token = api_token_create(user=user, tenant=tenant_obj, rotate=rotate, role=role)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(token.key)
