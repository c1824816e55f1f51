"""Load the bundled ontology classes, skills and the current metadata schema."""

from django.db import migrations


def forwards(apps, schema_editor):
    from ontology import loaders

    OntologyClass = apps.get_model("ontology", "OntologyClass")
    loaders.load_classes(OntologyClass)
    loaders.load_skills(apps.get_model("ontology", "Skill"), OntologyClass)
    loaders.load_schema(apps.get_model("ontology", "MetadataSchema"))


class Migration(migrations.Migration):
    dependencies = [("ontology", "0001_initial")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
