"""The three agents of the seed. They share the active catalog (no per-agent permissions)."""

from django.db import migrations

from conversations.agents_seed import agents_seed_ensure


def seed_agents(apps, schema_editor):
    agents_seed_ensure(apps.get_model("conversations", "Agent"))


def unseed_agents(apps, schema_editor):
    from conversations.agents_seed import AGENTS

    Agent = apps.get_model("conversations", "Agent")
    Agent.objects.filter(slug__in=[a["slug"] for a in AGENTS], sessions__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("conversations", "0001_initial")]

    operations = [migrations.RunPython(seed_agents, unseed_agents)]
