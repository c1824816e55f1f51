"""Each signal of the router, visible in `why`."""

from knowledge.routing_service import route_context

from .conftest import find, why_signals


def test_an_id_named_in_the_message_arrives_first_in_full(catalog):
    result = route_context(message="Me explique o PRICING_RULES")
    assert result.full[0].id == "PRICING_RULES"
    assert {"signal": "id", "rank": 1, "detail": "PRICING_RULES named in the message"} in result.full[0].why


def test_an_alias_named_in_the_message_is_an_id_hit(catalog):
    result = route_context(message="me mostra o GOYOU")
    assert result.full[0].id == "GOGENETIC_YOU"
    assert "id" in why_signals(result.full[0])


def test_an_ordinary_word_does_not_name_an_alias(catalog):
    # "preços" is also the alias PRECOS, but written as a word it is a word: BM25, not an ID hit.
    result = route_context(message="Quais são os preços?")
    pricing = find(result, "PRICING_RULES")
    assert "id" not in why_signals(pricing)
    assert pricing.shape == "full"


def test_semantic_focus_exact_then_parents_then_page(make_package):
    make_package("VALIDITY_FIELD", title="Validade", semantic_ids=["workPermit.components.equipment.validity"])
    make_package("COMPONENTS_TAB", title="Aba componentes", semantic_ids=["workPermit.components"])
    make_package("WORK_PERMIT", title="Permissão de trabalho", semantic_ids=["workPermit"])
    make_package("PERMIT_PAGE", title="Página da permissão", semantic_ids=["workPermit.details"])
    make_package("UNRELATED", title="Outra coisa", semantic_ids=["billing.invoice"])
    result = route_context(
        message="Explique isso.",
        semantic_context={"focus": "workPermit.components.equipment.validity", "page": "workPermit.details"},
    )
    ranked = [d.id for d in result.ranked()]
    assert ranked[:4] == ["VALIDITY_FIELD", "COMPONENTS_TAB", "WORK_PERMIT", "PERMIT_PAGE"]
    assert "UNRELATED" not in result.delivered_ids
    assert {"signal": "semantic", "rank": 1, "detail": "exact: workPermit.components.equipment.validity"} in find(
        result, "VALIDITY_FIELD"
    ).why
    assert {"signal": "semantic_parent", "rank": 1, "detail": "parent: workPermit.components"} in find(
        result, "COMPONENTS_TAB"
    ).why
    assert {"signal": "semantic_parent", "rank": 2, "detail": "parent: workPermit"} in find(result, "WORK_PERMIT").why
    assert {"signal": "semantic_page", "rank": 1, "detail": "page: workPermit.details"} in find(
        result, "PERMIT_PAGE"
    ).why
    assert result.full_ids == ["VALIDITY_FIELD"]  # the parents and the page are context: listed


def test_parents_answer_when_nothing_documents_the_focus_itself(make_package):
    make_package("COMPONENTS_TAB", title="Aba componentes", semantic_ids=["workPermit.components"])
    result = route_context(
        message="Explique.",
        semantic_context={
            "focus": {"semanticId": "workPermit.components.grid", "parentIds": ["workPermit.components"]}
        },
    )
    assert result.full_ids == ["COMPONENTS_TAB"]


def test_keywords_signal_names_the_keyword(catalog):
    result = route_context(message="Qual a taxa de urgência?")
    pricing = find(result, "PRICING_RULES")
    keyword_notes = [n for n in pricing.why if n["signal"] == "keyword"]
    assert keyword_notes and "taxa de urgência" in keyword_notes[0]["detail"]


def test_bm25_signal_shows_score_coverage_and_matched_terms(catalog):
    result = route_context(message="Qual o volume mínimo de DNA plasmidial?")
    best = result.full[0]
    assert best.id == "SAMPLE_INSTRUCTIONS"
    note = next(n for n in best.why if n["signal"] == "bm25")
    assert note["rank"] == 1 and "score" in note["detail"] and "coverage" in note["detail"]


def test_wiki_link_neighbours_of_a_strong_hit_are_listed_damped(make_package):
    make_package(
        "ANCHOR",
        title="Centrífuga refrigerada",
        keywords=["centrífuga"],
        body="Como operar a centrífuga refrigerada. Veja também [[NEIGHBOUR]].",
    )
    make_package("NEIGHBOUR", title="Rotores", body="Tipos de rotor e balanceamento.")
    make_package("FAR", title="Pipetas", body="Calibração de pipetas. Veja [[NEIGHBOUR]].")
    result = route_context(message="Como operar a centrífuga refrigerada?")
    assert result.full_ids == ["ANCHOR"]
    neighbour = find(result, "NEIGHBOUR")
    assert neighbour.shape == "listed"
    assert {"signal": "wikilink", "rank": 1, "detail": "linked with ANCHOR"} in neighbour.why
    assert "FAR" not in result.delivered_ids  # one hop only
    assert neighbour.score < find(result, "ANCHOR").score
