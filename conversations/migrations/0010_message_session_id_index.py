"""Messages indexed by (session, id); the index on session alone goes.

Every turn reads its session's last messages before its own, newest first. With only the
session index, a planner without fresh statistics (autovacuum off, a table that grew fast)
walked the primary key backwards over every session's messages: seen in the load bench as
0.03 ms growing to 7-12 ms per turn at 150,000 messages. (session, id) answers that read as one
index range whatever the statistics, and serves every other lookup by session.

On PostgreSQL the index is built CONCURRENTLY (writes go on while it builds), so this
migration is not atomic; SQLite (the embedded default) builds it the usual way.
"""

import django.db.models.deletion
from django.db import migrations, models


class AddIndexConcurrentlyOnPostgres(migrations.AddIndex):
    """``AddIndex`` that does not block writes on PostgreSQL (``CREATE INDEX CONCURRENTLY``)."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor != "postgresql":
            return super().database_forwards(app_label, schema_editor, from_state, to_state)
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)
        return None


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("conversations", "0009_agronomy_ontology_agent"),
    ]

    operations = [
        AddIndexConcurrentlyOnPostgres(
            model_name="message",
            index=models.Index(fields=["session", "id"], name="message_session_id_idx"),
        ),
        migrations.AlterField(
            model_name="message",
            name="session",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="messages",
                to="conversations.session",
            ),
        ),
    ]
