"""Message.context_snapshot_id (a bare integer) becomes the foreign key it always meant.

The column keeps its name and values: the field is renamed in the model state only,
ids that point at no snapshot are cleared, then the column gains its constraint.
"""

import django.db.models.deletion
from django.db import migrations, models


def clear_dangling_snapshot_ids(apps, schema_editor):
    Message = apps.get_model("conversations", "Message")
    ContextSnapshot = apps.get_model("conversations", "ContextSnapshot")
    known = ContextSnapshot.objects.values("pk")
    Message.objects.filter(context_snapshot_id__isnull=False).exclude(context_snapshot_id__in=known).update(
        context_snapshot_id=None
    )


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0004_agent_ontology_guardian"),
    ]

    operations = [
        migrations.RunPython(clear_dangling_snapshot_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="message",
            name="context_snapshot_id",
            field=models.BigIntegerField(blank=True, db_column="context_snapshot_id", null=True),
        ),
        migrations.RenameField(model_name="message", old_name="context_snapshot_id", new_name="context_snapshot"),
        migrations.AlterField(
            model_name="message",
            name="context_snapshot",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="messages",
                to="conversations.contextsnapshot",
            ),
        ),
    ]
