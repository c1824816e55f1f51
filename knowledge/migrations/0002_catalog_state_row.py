from django.db import migrations


def create_state(apps, schema_editor):
    CatalogState = apps.get_model("knowledge", "CatalogState")
    CatalogState.objects.get_or_create(pk=1, defaults={"version": 1})


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]
    operations = [migrations.RunPython(create_state, migrations.RunPython.noop)]
