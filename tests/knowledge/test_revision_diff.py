from knowledge.revision_diff import revision_diff

OLD = {
    "title": "Preços",
    "summary": "Resumo",
    "kind": "knowledge",
    "strict": False,
    "aliases": ["PRECOS"],
    "keywords": [],
    "semantic_ids": [],
    "source": "",
    "body": "# Título\n\n-- lista antiga\nLinha igual\n",
    "is_active": True,
    "is_overridden": False,
}


def test_metadata_is_compared_field_by_field_and_the_body_line_by_line():
    new = {**OLD, "aliases": ["PRECOS", "TABELA"], "is_active": False, "body": "# Título\n\nLinha nova\nLinha igual\n"}
    diff = revision_diff(OLD, new, old_label="r1", new_label="r2")
    assert diff.changed_fields == ["aliases", "is_active", "body"]
    aliases = next(f for f in diff.fields if f.name == "aliases")
    assert (aliases.old, aliases.new) == ("PRECOS", "PRECOS, TABELA")
    assert next(f for f in diff.fields if f.name == "is_active").new == "no"
    assert [(line.kind, line.text) for line in diff.body] == [
        ("header", "--- r1"),
        ("header", "+++ r2"),
        ("hunk", "@@ -1,4 +1,4 @@"),
        ("context", " # Título"),
        ("context", " "),
        ("del", "--- lista antiga"),  # a removed "-- " line is a deletion, not a file header
        ("add", "+Linha nova"),
        ("context", " Linha igual"),
    ]


def test_identical_snapshots_have_no_changes():
    diff = revision_diff(OLD, dict(OLD))
    assert diff.changed_fields == [] and diff.body == []
