import secrets

from django.core.management.base import BaseCommand

from accounts.services import api_token_create, curator_ensure, tenant_get_or_create
from rest_framework.authtoken.models import Token


class Command(BaseCommand):
    help = "Ensure the demo tenant, a demo curator account and its API token (printed once)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", default="demo")
        parser.add_argument("--username", default="curator")
        parser.add_argument(
            "--base-url", default="http://127.0.0.1:8000", help="Where the app is served (scripts/run passes HOST:PORT)"
        )

    def handle(self, *args, tenant, username, base_url, **options):
        base_url = base_url.rstrip("/")
        tenant_obj = tenant_get_or_create(slug=tenant, name="Demo")
        user_existed = Token.objects.filter(user__username=username).exists()
        password = None if user_existed else secrets.token_urlsafe(12)
        user = curator_ensure(username=username, tenant=tenant_obj, password=password)
        if password:
            user.set_password(password)
            user.save(update_fields=["password"])
        token = api_token_create(user=user, tenant=tenant_obj)
        if user_existed:
            self.stdout.write(f"Demo curator '{username}' exists (tenant '{tenant}'); token unchanged.")
            return
        self.stdout.write(self.style.SUCCESS("Demo account created (shown once):"))
        self.stdout.write(f"  admin login : {username} / {password}  at {base_url}/admin/")
        self.stdout.write(f"  API token   : {token.key}")
        self.stdout.write(f'  try         : curl -H "Authorization: Token {token.key}" {base_url}/api/v1/packages')
