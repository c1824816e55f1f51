"""The admin retrieval test page and the evaluate_retrieval command."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management import call_command

QUERIES = Path(settings.BASE_DIR) / "knowledge" / "evaluation" / "queries.json"


def test_the_package_changelist_links_to_the_retrieval_test(client, curator, catalog):
    client.force_login(curator)
    page = client.get("/admin/knowledge/package/")
    assert page.status_code == 200
    assert "/admin/knowledge/package/retrieval-test/" in page.content.decode()


def test_the_retrieval_test_shows_shapes_and_why(client, curator, catalog):
    client.force_login(curator)
    empty = client.get("/admin/knowledge/package/retrieval-test/")
    assert empty.status_code == 200 and "Route" in empty.content.decode()
    page = client.get(
        "/admin/knowledge/package/retrieval-test/",
        {"message": "Como assino o orçamento e qual o prazo do Sanger?", "focus": "quote.discount"},
    )
    html = page.content.decode()
    assert page.status_code == 200
    assert "Full (" in html and "Listed: id, title, one line" in html and "Procedures: by name only" in html
    assert "CLICKSIGN_PROCESS" in html and "DELIVERY_TIMELINES" in html
    assert "exact: quote.discount" in html  # why


def test_the_retrieval_test_is_for_staff_only(client, user, catalog):
    client.force_login(user)
    page = client.get("/admin/knowledge/package/retrieval-test/", {"message": "prazo"})
    assert page.status_code == 302  # to the admin login


def test_the_shipped_labeled_set_is_large_varied_and_valid(catalog):
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))
    assert len(queries) >= 60
    assert {q["lang"] for q in queries} == {"pt", "en", "es"}
    assert {"multi", "alias", "typo", "out_of_domain", "single"} <= {q["type"] for q in queries}
    ids = set(catalog.ids)
    assert all(set(q["expected"]) <= ids for q in queries)


def test_evaluate_retrieval_prints_the_four_figures(catalog, capsys):
    call_command("evaluate_retrieval", str(QUERIES), "--json")
    figures = json.loads(capsys.readouterr().out)
    # Regression floor for the router on the sample catalog (docs/retrieval.md has the current figures).
    assert figures["hit@1"] >= 0.9
    assert figures["recall_full"] >= 0.9
    assert figures["recall_full_or_listed"] >= 0.95
    assert figures["negative_precision"] >= 0.8
    call_command("evaluate_retrieval", str(QUERIES), "--verbose")
    out = capsys.readouterr().out
    for label in ("hit@1", "recall in full", "recall in full or listed", "negative precision"):
        assert label in out


def test_evaluate_retrieval_rejects_a_bad_file(tmp_path, catalog):
    import pytest
    from django.core.management.base import CommandError

    bad = tmp_path / "bad.json"
    bad.write_text('[{"query": 1}]')
    with pytest.raises(CommandError, match="needs a 'query' string"):
        call_command("evaluate_retrieval", str(bad))


def test_evaluate_retrieval_measures_a_folder_with_out_of_scope_questions(tmp_path, capsys):
    # The folder's out-of-domain question, set beside an out-of-scope set the catalog does not answer:
    # its out-of-domain precision counts it clean only with the set (stand-in margins: any closer question).
    import pytest
    from django.core.management.base import CommandError

    from common.text import retrieval_embeddings

    packages = Path(settings.BASE_DIR) / "knowledge" / "evaluation" / "catalogs" / "aereo"
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps([{"query": "Vocês vendem pacote com passagem e hotel em Vila Aurora?", "expected": []}]),
        encoding="utf-8",
    )
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"pt": ["Vocês vendem pacote de viagem com hotel incluso?"]}), encoding="utf-8")
    args = ["evaluate_retrieval", str(questions), "--catalog", str(packages / "packages"), "--json"]
    if retrieval_embeddings.available():
        call_command(*args)
        assert json.loads(capsys.readouterr().out)["by_kind"]["all"]["ood_precision"]["ok"] == 0
        call_command(*args, "--out-of-scope", str(own))
        assert json.loads(capsys.readouterr().out)["by_kind"]["all"]["ood_precision"]["ok"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"pt": "not a list"}', encoding="utf-8")
    with pytest.raises(CommandError, match="Cannot read .*a list"):
        call_command(*args, "--out-of-scope", str(bad))
    with pytest.raises(CommandError, match="--out-of-scope needs --catalog"):
        call_command("evaluate_retrieval", str(questions), "--out-of-scope", str(own))
