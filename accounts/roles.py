"""Staff roles as Django groups, shared by name.

Each feature app grants its own permissions to these groups in its own
``post_migrate`` handler (``get_or_create`` by name), so accounts knows the
roles without importing any feature app, and an app added later extends a role
without touching this module.
"""

from django.contrib.auth.models import Group

CURATORS_GROUP = "curators"  # edit curated content (knowledge, ontology, agents) in the admin


def curators_group() -> Group:
    group, _ = Group.objects.get_or_create(name=CURATORS_GROUP)
    return group
