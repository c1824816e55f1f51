from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models


class Tenant(models.Model):
    """An organization. Every tenant-owned row is reachable only through its tenant."""

    slug = models.SlugField(max_length=64, unique=True, validators=[RegexValidator(r"^[a-z0-9][a-z0-9-]*$")])
    name = models.CharField(max_length=200)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A user's membership of a tenant. One tenant per user keeps token auth unambiguous."""

    class Role(models.TextChoices):
        MEMBER = "member", "Member"
        ADMIN = "admin", "Administrator"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tenant__slug", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant}"
