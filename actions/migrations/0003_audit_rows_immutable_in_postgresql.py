"""A receipt that raw SQL cannot edit either: on PostgreSQL a trigger refuses UPDATE and DELETE
of audit rows. One update passes: a deleted user's rows lose their actor link (SET NULL) and
nothing else. TRUNCATE (test flushes, a deliberate wipe) is not a row event and is unaffected.
SQLite (the embedded demo) keeps the model-level guard only."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION actions_audit_immutable() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.actor_id IS NULL
     AND (to_jsonb(NEW) - 'actor_id') = (to_jsonb(OLD) - 'actor_id') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'actions_actionaudit rows are immutable';
END
$$ LANGUAGE plpgsql;
CREATE TRIGGER actions_audit_immutable BEFORE UPDATE OR DELETE ON actions_actionaudit
  FOR EACH ROW EXECUTE FUNCTION actions_audit_immutable();
"""
DROP = """
DROP TRIGGER IF EXISTS actions_audit_immutable ON actions_actionaudit;
DROP FUNCTION IF EXISTS actions_audit_immutable();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("actions", "0002_auditors_and_operators_groups")]

    operations = [migrations.RunPython(forwards, backwards)]
