import secrets

from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

from accounts.services import api_token_create, staff_member_ensure, tenant_get_or_create

# The demo account curates and audits: it sees knowledge, the registry, the ontology,
# context snapshots, explanations and routing records (README, "Roles").
DEMO_GROUPS = ("curators", "auditors")


class Command(BaseCommand):
    help = (
        "Ensure the demo tenant, a demo account (curator and auditor) and its API token; the password and "
        "token are printed once, when the account is created."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", default="demo")
        parser.add_argument("--username", default="curator")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="Where the app is served (scripts/run passes HOST:PORT)"
        )
        parser.add_argument(
            "--validator",
            metavar="USERNAME",
            default="",
            help="Also ensure a validators-group account without a password (ingest_chunks --validator USERNAME "
            "indexes the critical sample chunks with it)",
        )

    def handle(self, *args, tenant, username, base_url, validator, **options):
        base_url = base_url.rstrip("/")
        tenant_obj = tenant_get_or_create(slug=tenant, name="Demo")
        if validator:
            staff_member_ensure(username=validator, tenant=tenant_obj, groups=("validators",))
        user_existed = Token.objects.filter(user__username=username).exists()
        password = None if user_existed else secrets.token_urlsafe(12)
        user = staff_member_ensure(username=username, tenant=tenant_obj, password=password, groups=DEMO_GROUPS)
        if password:
            user.set_password(password)
            user.save(update_fields=["password"])
        token = api_token_create(user=user, tenant=tenant_obj)
        if user_existed:
            self.stdout.write(f"Demo account '{username}' exists (tenant '{tenant}'); token unchanged.")
            return
        self.stdout.write(self.style.SUCCESS("Demo account created (shown once):"))
        self.stdout.write(f"  admin login : {username} / {password}  at {base_url}/admin/")
        self.stdout.write(f"  API token   : {token.key}")
        self.stdout.write(f'  try         : curl -H "Authorization: Token {token.key}" {base_url}/api/v1/packages')
        self.stdout.write(f"  MCP         : {base_url}/mcp/  (Authorization: Bearer {token.key})")
