"""Through the service and the database: strict-rule budget, multi-part, paraphrase feedback, synonym sets,
and evaluate_retrieval on an arbitrary folder."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from common.text import retrieval_embeddings
from knowledge.routing_service import fetch_feedback_record
from knowledge.models import CatalogState, Package, SynonymSet
from knowledge.routing_service import route_context
from knowledge.selectors import catalog_version_get

from .conftest import find


def test_a_weakly_linked_strict_rule_does_not_push_the_answer_out_of_the_budget(catalog):
    result = route_context(message="Quais alvos de qPCR vocês têm?", budget_tokens=1000)
    assert "TARGETS_QPCR" in result.full_ids
    assert result.full[0].id == "TARGETS_QPCR" and result.full[0].body
    rule = next((r for r in result.rules if r.id == "PORTFOLIO_EXCLUSIONS"), None)
    # Reached through one wiki-link hop only: not a guardrail for this question.
    assert rule is None or rule.shape == "listed"


def test_a_strict_rule_that_passes_the_relevance_test_still_arrives_past_the_budget(catalog):
    result = route_context(message="Vocês fazem teste de paternidade?", budget_tokens=50)
    assert [(r.id, r.shape) for r in result.rules if r.strict] == [("PORTFOLIO_EXCLUSIONS", "full")]


@pytest.mark.parametrize(
    "message,expected",
    [
        ("Quanto custa o Sanger e qual o prazo?", {"PRICING_RULES", "DELIVERY_TIMELINES"}),
        ("Qual o prazo e como descartar amostras?", {"DELIVERY_TIMELINES"}),
    ],
)
def test_two_questions_in_one_sentence_are_two_parts(catalog, message, expected):
    result = route_context(message=message)
    assert len(result.parts) == 2
    assert expected <= set(result.full_ids)
    parts_seen = {n.get("part") for e in expected for n in find(result, e).why}
    assert parts_seen >= {0} and len(result.part_rankings) == 2


def _record(django_capture_on_commit_callbacks, **kwargs):
    with django_capture_on_commit_callbacks(execute=True):
        return fetch_feedback_record(**kwargs)


def test_fetch_feedback_carries_over_to_a_paraphrase(catalog, django_capture_on_commit_callbacks):
    asked, paraphrase, other_need = "Quanto custa o Sanger?", "Qual o preço de um Sanger?", "Qual o prazo do Sanger?"
    before = route_context(message=paraphrase)
    assert "SAMPLE_INSTRUCTIONS" in before.listed_ids
    other_before = route_context(message=other_need)
    assert "SAMPLE_INSTRUCTIONS" in other_before.listed_ids

    rows = _record(django_capture_on_commit_callbacks, query=asked, package_id="SAMPLE_INSTRUCTIONS")
    assert rows and rows[0].signature[0] == "PRICING_RULES"
    # "preço" and "custa" share no term: the words alone would not carry the feedback (Jaccard 1/3).
    after = route_context(message=paraphrase)
    assert "SAMPLE_INSTRUCTIONS" in after.full_ids
    note = next(n for n in find(after, "SAMPLE_INSTRUCTIONS").why if n["signal"] == "feedback")
    assert "fetched after being listed" in note["detail"]
    # A different need about the same product (its best entry is the delivery times) is untouched.
    assert "SAMPLE_INSTRUCTIONS" not in route_context(message=other_need).full_ids


def test_feedback_on_a_paraphrase_stays_within_its_tenant(
    catalog, tenant, other_tenant, django_capture_on_commit_callbacks
):
    asked = "Quanto custa o Sanger?"
    _record(django_capture_on_commit_callbacks, query=asked, package_id="SAMPLE_INSTRUCTIONS", tenant=tenant)
    paraphrase = "Qual o preço de um Sanger?"
    assert "SAMPLE_INSTRUCTIONS" in route_context(message=paraphrase, tenant=tenant).full_ids
    assert "SAMPLE_INSTRUCTIONS" not in route_context(message=paraphrase, tenant=other_tenant).full_ids


def test_a_synonym_set_saved_in_the_admin_applies_to_the_next_question(catalog, client, curator):
    question = "O teste de antepassados é confiável?"
    assert "GOGENETIC_YOU" not in route_context(message=question).full_ids
    version = catalog_version_get()
    client.force_login(curator)
    response = client.post(
        "/admin/knowledge/synonymset/add/",
        {"name": "ancestry", "terms": "antepassados, ancestralidade", "is_active": "on"},
    )
    assert response.status_code == 302, response.content.decode()[:500]
    assert SynonymSet.objects.get(name="ancestry").terms == ["antepassados", "ancestralidade"]
    assert catalog_version_get() == version + 1
    result = route_context(message=question)
    assert result.ranked()[0].id == "GOGENETIC_YOU" and "GOGENETIC_YOU" in result.full_ids
    # Deactivated: gone again.
    synonym_set = SynonymSet.objects.get(name="ancestry")
    response = client.post(
        f"/admin/knowledge/synonymset/{synonym_set.pk}/change/",
        {"name": "ancestry", "terms": "antepassados, ancestralidade"},
    )
    assert response.status_code == 302
    assert "GOGENETIC_YOU" not in route_context(message=question).full_ids


def test_a_synonym_set_needs_two_terms(catalog, client, curator):
    client.force_login(curator)
    response = client.post("/admin/knowledge/synonymset/add/", {"name": "one", "terms": "scaffold", "is_active": "on"})
    assert response.status_code == 200
    assert "at least two different terms" in response.content.decode()
    assert not SynonymSet.objects.exists()


def _folder(tmp_path):
    packages = tmp_path / "catalog"
    packages.mkdir()
    (packages / "01_ferias.md").write_text(
        "---\nid: VACATION_POLICY\ntitle: Férias\nsummary: Como pedir férias.\nkind: knowledge\n"
        "keywords: [férias]\n---\nAs férias são pedidas no portal com 30 dias de antecedência.\n",
        encoding="utf-8",
    )
    (packages / "02_pedir.md").write_text(
        "---\nid: VACATION_REQUEST\ntitle: Pedir férias no portal\nsummary: Passo a passo.\nkind: procedure\n"
        "---\n1. Abra o portal. 2. Escolha as datas.\n",
        encoding="utf-8",
    )
    (packages / "03_etica.md").write_text(
        "---\nid: ETHICS_RULE\ntitle: Presentes de fornecedores\nsummary: Limite de presentes.\nkind: rule\n"
        "strict: true\nkeywords: [presente, fornecedor]\n---\nPresentes acima de R$ 100 são recusados.\n",
        encoding="utf-8",
    )
    questions = tmp_path / "questions.dev.json"
    questions.write_text(
        json.dumps(
            [
                {
                    "query": "Com quanta antecedência peço férias?",
                    "lang": "pt",
                    "expected": ["VACATION_POLICY"],
                    "type": "direct",
                    "group": "g1",
                },
                {
                    "query": "How far ahead do I ask for vacation?",
                    "lang": "en",
                    "expected": ["VACATION_POLICY"],
                    "type": "direct",
                    "group": "g1",
                },
                {
                    "query": "¿Con cuánta antelación pido vacaciones?",
                    "lang": "es",
                    "expected": ["VACATION_POLICY"],
                    "type": "direct",
                    "group": "g1",
                },
                {
                    "query": "Posso aceitar presente de fornecedor?",
                    "lang": "pt",
                    "expected": ["ETHICS_RULE"],
                    "type": "direct",
                    "group": "g2",
                },
                {"query": "Vai chover amanhã?", "lang": "pt", "expected": [], "type": "ood", "group": "g3"},
            ]
        ),
        encoding="utf-8",
    )
    return packages, questions


def test_evaluate_retrieval_measures_any_folder_without_touching_the_database_catalog(tmp_path, catalog, capsys):
    packages, questions = _folder(tmp_path)
    before = (list(Package.objects.values_list("package_id", "revision_number")), CatalogState.objects.get().version)
    call_command("evaluate_retrieval", str(questions), "--catalog", str(packages), "--json")
    figures = json.loads(capsys.readouterr().out)
    hit = figures["by_kind"]["direct"]["hit@1"]
    assert hit["n"] == 4 and hit["rate"] == round(hit["ok"] / 4, 3)
    assert hit["ci95"][0] <= hit["rate"] <= hit["ci95"][1] and hit["ci95"][1] - hit["ci95"][0] > 0.3  # small n, wide
    assert figures["by_kind"]["ood"]["ood_precision"] == {"ok": 1, "n": 1, "rate": 1.0, "ci95": [0.207, 1.0]}
    assert figures["by_kind"]["all"]["usable"]["n"] == 4
    assert figures["by_kind"]["all"]["questions"] == 5
    bodies = figures["by_kind"]["all"]["unexpected_full"]
    assert bodies["per_question"] == round(bodies["n"] / 5, 3) and bodies["n"] <= bodies["full"]
    parity = figures["parity"]
    assert parity["en"]["groups"] == 1 and parity["en"]["pt"] == 1  # the Portuguese question is answered
    assert parity["en"]["ratio"] == parity["en"]["en"] / 1 and parity["es"]["ratio"] == parity["es"]["es"] / 1
    after = (list(Package.objects.values_list("package_id", "revision_number")), CatalogState.objects.get().version)
    assert before == after
    assert "VACATION_POLICY" not in {p for p, _ in after[0]}

    call_command("evaluate_retrieval", str(questions), "--catalog", str(packages))
    out = capsys.readouterr().out
    for label in (
        "hit@1",
        "usable",
        "anywhere",
        "out-of-domain precision",
        "unexpected full / q",
        "parity en ÷ pt",
        "parity es ÷ pt",
    ):
        assert label in out


def test_evaluate_retrieval_refuses_what_it_cannot_measure(tmp_path, catalog):
    packages, questions = _folder(tmp_path)
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("evaluate_retrieval", str(questions), "--catalog", str(tmp_path / "missing"))
    (packages / "04_bad.md").write_text("no front matter", encoding="utf-8")
    with pytest.raises(CommandError, match="04_bad.md: front matter"):
        call_command("evaluate_retrieval", str(questions), "--catalog", str(packages))
    (packages / "04_bad.md").unlink()
    wrong = tmp_path / "questions.wrong.json"
    wrong.write_text(json.dumps([{"query": "x", "expected": ["NOPE"]}]), encoding="utf-8")
    with pytest.raises(CommandError, match="not in the catalog: NOPE"):
        call_command("evaluate_retrieval", str(wrong), "--catalog", str(packages))
    test_split = tmp_path / "questions.test.json"
    test_split.write_text(questions.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(CommandError, match="refused on a test split"):
        call_command("evaluate_retrieval", str(test_split), "--catalog", str(packages), "--verbose")


def _colloquial(tmp_path):
    """A question sharing no word with the package that answers it (ETHICS_RULE of ``_folder``)."""
    questions = tmp_path / "questions.colloquial.json"
    questions.write_text(
        json.dumps(
            [{"query": "Posso ficar com o mimo que o parceiro mandou?", "lang": "pt", "expected": ["ETHICS_RULE"]}]
        ),
        encoding="utf-8",
    )
    return questions


def _hit_at_1(questions, packages, capsys):
    def hit_at_1(*extra):
        call_command("evaluate_retrieval", str(questions), "--catalog", str(packages), "--json", *extra)
        return json.loads(capsys.readouterr().out)["hit@1"]

    return hit_at_1


def test_evaluate_retrieval_measures_proposed_search_terms_before_they_are_accepted(tmp_path, catalog, capsys):
    packages, _ = _folder(tmp_path)
    questions = _colloquial(tmp_path)
    terms = tmp_path / "terms.json"
    terms.write_text(
        json.dumps({"ETHICS_RULE": {"pt": ["mimo de parceiro", "agrado"], "en": ["supplier gift"]}}), encoding="utf-8"
    )

    hit_at_1 = _hit_at_1(questions, packages, capsys)

    assert hit_at_1() == 0.0  # no word of the question is in the package
    assert hit_at_1("--search-terms", str(terms)) == 1.0
    assert hit_at_1("--search-terms", str(terms), "--search-terms-languages", "en,es") == 0.0

    with pytest.raises(CommandError, match="needs --catalog"):
        call_command("evaluate_retrieval", str(questions), "--search-terms", str(terms))
    terms.write_text(json.dumps({"NOT_THERE": ["x"]}), encoding="utf-8")
    with pytest.raises(CommandError, match="not in the folder: NOT_THERE"):
        call_command("evaluate_retrieval", str(questions), "--catalog", str(packages), "--search-terms", str(terms))
    terms.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CommandError, match="a JSON object"):
        call_command("evaluate_retrieval", str(questions), "--catalog", str(packages), "--search-terms", str(terms))


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
def test_evaluate_retrieval_measures_proposed_example_questions_before_they_are_accepted(tmp_path, catalog, capsys):
    packages, _ = _folder(tmp_path)
    questions = _colloquial(tmp_path)
    examples = tmp_path / "examples.json"
    examples.write_text(
        json.dumps({"ETHICS_RULE": {"pt": ["Um parceiro me mandou um mimo, posso aceitar?"], "en": []}}),
        encoding="utf-8",
    )

    hit_at_1 = _hit_at_1(questions, packages, capsys)

    assert hit_at_1() == 0.0
    assert hit_at_1("--example-questions", str(examples)) == 1.0

    with pytest.raises(CommandError, match="needs --catalog"):
        call_command("evaluate_retrieval", str(questions), "--example-questions", str(examples))
    examples.write_text(json.dumps({"NOT_THERE": ["x?"]}), encoding="utf-8")
    with pytest.raises(CommandError, match="not in the folder: NOT_THERE"):
        call_command(
            "evaluate_retrieval", str(questions), "--catalog", str(packages), "--example-questions", str(examples)
        )
    examples.write_text(json.dumps({"ETHICS_RULE": {"pt": "not a list"}}), encoding="utf-8")
    with pytest.raises(CommandError, match="a list per language"):
        call_command(
            "evaluate_retrieval", str(questions), "--catalog", str(packages), "--example-questions", str(examples)
        )
