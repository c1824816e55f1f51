from django.db import migrations

from conversations.agents_seed import agronomy_agent_ensure


def create_agronomy_agent(apps, schema_editor):
    agronomy_agent_ensure(apps.get_model("conversations", "Agent"))


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0008_message_feedback"),
    ]

    operations = [migrations.RunPython(create_agronomy_agent, migrations.RunPython.noop)]
