from django.db import migrations, models


def drop_blends_without_rows(apps, schema_editor):
    """A vector stored with example questions before their own vectors were kept is dropped: it lacks
    them, and the beat sweep (or ``embed_packages``) computes both again. Vectors are derived data;
    until then the router ranks that entry without the dense signal."""
    RevisionSearchTerms = apps.get_model("knowledge", "RevisionSearchTerms")
    RevisionEmbedding = apps.get_model("knowledge", "RevisionEmbedding")
    with_questions = [
        pk
        for pk, questions in RevisionSearchTerms.objects.filter(status="accepted").values_list(
            "revision_id", "accepted_questions"
        )
        if questions
    ]
    for start in range(0, len(with_questions), 500):
        RevisionEmbedding.objects.filter(revision_id__in=with_questions[start : start + 500]).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("knowledge", "0011_search_terms_questions_changed_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="revisionembedding",
            name="example_vectors",
            field=models.BinaryField(
                blank=True,
                default=b"",
                help_text="The accepted example questions' own vectors, one after another (float32 little-endian); empty without any.",
            ),
        ),
        migrations.RunPython(drop_blends_without_rows, migrations.RunPython.noop),
    ]
