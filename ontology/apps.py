from django.apps import AppConfig
from django.db.models.signals import post_migrate

ONTOLOGY_VALIDATORS_GROUP = "ontology_validators"
CRITICAL_PERMISSION = "validate_critical_chunk"


def ensure_curation_groups(sender, **kwargs):
    """Curators edit the ontology in the admin; only the validators group (the seed's
    curation committee) may validate high-criticality chunks. Runs after migrate because
    permissions exist only then."""
    from django.contrib.auth.models import Group, Permission

    from accounts.roles import CURATORS_GROUP

    perms = Permission.objects.filter(content_type__app_label="ontology")
    if not perms.exists():
        return
    curators, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    curators.permissions.add(*perms.exclude(codename=CRITICAL_PERMISSION))
    validators, _ = Group.objects.get_or_create(name=ONTOLOGY_VALIDATORS_GROUP)
    validators.permissions.add(*perms.filter(codename=CRITICAL_PERMISSION))


class OntologyConfig(AppConfig):
    name = "ontology"

    def ready(self):
        post_migrate.connect(ensure_curation_groups, sender=self, dispatch_uid="ontology_curation_groups")
