"""Pure routing over the bundled sample chunks: strategies, the diagnostic chain, interruptions."""

import pytest

from ontology.routing.corpus import CASE_EVIDENCE_TYPES, ChunkRecord, Corpus, matches
from ontology.routing.engine import route
from ontology.routing.search import analyze
from ontology.routing.strategies import casos_semelhantes, graphrag, hibrida, raptor

from .conftest import SEED_MESSAGE

FILTERS = {
    "bioma": ["cerrado"],
    "cultura": ["soja"],
    "classe_ontologica": ["sintoma", "causa_provavel", "processo", "intervencao"],
}
CONTEXT = {"bioma": ["cerrado"], "cultura": ["soja"]}
CHAIN = ["sintoma", "causa_provavel", "processo", "estrutura", "intervencao", "pratica", "indicador"]


def _records(corpus, run):
    return [corpus.get(c["chunk_id"]) for step in run.steps for c in step["chunks"]]


def test_sample_data_covers_every_class_with_at_least_60_chunks(sample_rows):
    from ontology.routing.data import classes_file

    assert len(sample_rows) >= 60
    assert {r["classe_ontologica"] for r in sample_rows} == {c["id"] for c in classes_file()["classes"]}
    assert len(classes_file()["classes"]) == 16


def test_hibrida_returns_only_chunks_within_the_filters(corpus):
    run = hibrida(corpus, analyze("baixa nodulação soja causas"), FILTERS)
    records = _records(corpus, run)
    assert records and all(matches(r, FILTERS) for r in records)
    scores = [c["score"] for c in run.steps[0]["chunks"]]
    assert scores == sorted(scores, reverse=True)


def test_filters_are_applied_before_scoring(corpus):
    # the best match for "erosão sulcos" overall is outside the class filter, so it is never scored
    everything = hibrida(corpus, analyze("erosão em sulcos terraços"), {})
    only_causes = hibrida(corpus, analyze("erosão em sulcos terraços"), {"classe_ontologica": ["causa_provavel"]})
    assert everything.steps[0]["chunks"][0]["classe_ontologica"] != "causa_provavel"
    assert {c["classe_ontologica"] for c in only_causes.steps[0]["chunks"]} == {"causa_provavel"}


def test_casos_semelhantes_returns_case_evidence_matching_the_context(corpus):
    run = casos_semelhantes(corpus, analyze("baixa nodulação no segundo ano de soja"), CONTEXT)
    records = _records(corpus, run)
    assert records[0].chunk_id == "cas_nodulacao_go_2024"
    assert all(matches(r, CONTEXT) and r.meta["tipo_evidencia"] in CASE_EVIDENCE_TYPES for r in records)


def test_graphrag_expands_over_shared_relations_and_wikilinks_within_the_filters(corpus):
    filters = {
        "bioma": ["cerrado"],
        "cultura": ["soja"],
        "classe_ontologica": ["intervencao", "pratica", "dosagem", "contraindicacao"],
    }
    run = graphrag(corpus, analyze("reinoculação bradirrizóbio"), filters)
    step = run.steps[0]
    assert step["seeds"] and step["expanded"]
    assert all(matches(r, filters) for r in _records(corpus, run))
    expanded = {c["chunk_id"]: c["via"] for c in step["chunks"] if "via" in c}
    # int_reinoculacao links [[dos_inoculante_soja]] and [[con_inoculante_fungicida]]
    assert expanded["con_inoculante_fungicida"]["wikilink"] is True
    assert all(via["shared"] or via["wikilink"] for via in expanded.values())


@pytest.mark.parametrize(
    "query, best_branch",
    [
        ("o que é agricultura de processo", "conceitos/principios"),
        ("como funciona a ciclagem de nutrientes", "processos_ecologicos/ciclo_nutrientes"),
        ("indicadores de campo", "monitoramento/indicadores_campo"),
    ],
)
def test_branch_retrieval_ranks_the_taxonomy_branch_that_fits_first(corpus, query, best_branch):
    """'raptor' in the seed's matrix is taxonomy-branch retrieval here (see docs/ontology.md):
    a reversed or shuffled branch ranking fails this."""
    filters = {"classe_ontologica": ["conceito", "processo", "estrutura", "indicador"]}
    run = raptor(corpus, analyze(query), filters)
    branch_step, chunk_step = run.steps
    scores = [b["score"] for b in branch_step["branches"]]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    assert branch_step["branches"][0]["ramo"] == best_branch
    chosen = branch_step["chosen"][0]
    assert chosen == best_branch
    records = _records(corpus, run)
    assert records[0].branch.startswith(chosen)
    assert all(matches(r, filters) for r in records)


def test_seed_example_runs_the_full_chain_with_one_section_per_step(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    assert outcome.strategy == "multi_hop_guiado"
    chain = [s for s in outcome.steps if s["name"] in CHAIN]
    assert [s["name"] for s in chain] == CHAIN
    assert outcome.interruptions == []
    first, second = chain[0], chain[1]
    assert first["chunks"][0]["chunk_id"] == "sin_baixa_nodulacao"
    assert second["intent"] == "Quais causas prováveis explicam baixa nodulação em soja no Cerrado?"
    assert second["chunks"][0]["chunk_id"] == "cau_inoculacao_ineficiente"
    for step in chain:
        assert step["filters"] == {"bioma": ["cerrado"], "cultura": ["soja"], "classe_ontologica": [step["name"]]}
        assert step["chunks"], step["name"]
        assert all(matches(corpus.get(c["chunk_id"]), step["filters"]) for c in step["chunks"])
    context = outcome.render_context()
    assert "## 1. Sintoma" in context and "[sin_baixa_nodulacao]" in context and "## 7. Indicadores" in context


def test_each_chain_step_forms_its_intent_from_the_previous_steps_findings(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    chain = [s for s in outcome.steps if s["name"] in CHAIN]
    anchor = set(chain[0]["findings"]["keys"])
    assert anchor == {"sintoma:baixa_nodulacao"}
    for prev, step in zip(chain, chain[1:]):
        assert step["uses"]["chunks"] == [c["chunk_id"] for c in prev["chunks"]]
        assert set(step["uses"]["keys"]) == set(prev["findings"]["keys"]) | anchor
        assert step["uses"]["salient_terms"] == prev["findings"]["salient_terms"] != []
        assert any(term in step["intent"] for term in prev["findings"]["terms"]), step["name"]
        # every chunk it kept is related to what the previous step found
        for cite in step["chunks"]:
            assert corpus.get(cite["chunk_id"]).relation_keys & set(step["uses"]["keys"])


def test_interruption_unclear_symptom_asks_a_clarifying_question(corpus, seed_skills, skill_specs):
    outcome = route(
        message="minhas plantas estão estranhas", skills=seed_skills, corpus=corpus, skill_catalog=skill_specs
    )
    assert outcome.pattern == "diagnosis"
    assert [s["name"] for s in outcome.steps] == ["sintoma"]
    assert outcome.steps[0]["status"] == "inconclusive"
    (item,) = outcome.interruptions
    assert item["type"] == "clarifying_question" and item["step"] == "sintoma"
    assert item["questions"][0]["text"].startswith("Pode descrever")


def test_interruption_causes_without_convergence_ask_one_or_two_disambiguation_questions(
    corpus, seed_skills, skill_specs
):
    outcome = route(
        message="minhas plantas de milho estão com folhas amarelas",
        skills=seed_skills,
        corpus=corpus,
        skill_catalog=skill_specs,
    )
    assert [s["name"] for s in outcome.steps] == ["sintoma", "causa_provavel"]
    assert outcome.steps[1]["status"] == "not_converged"
    (item,) = outcome.interruptions
    assert item["type"] == "disambiguation" and len(item["candidates"]) > 3
    assert 1 <= len(item["questions"]) <= 2
    # the colour is already in the message, so it is not asked again
    assert [q["id"] for q in item["questions"]] == ["idade_problema", "historico_recente"]


def test_disambiguation_questions_follow_the_language_of_the_message(corpus, skill_specs):
    outcome = route(message="my corn plants have yellow leaves", skills=[], corpus=corpus, skill_catalog=skill_specs)
    item = outcome.interruptions[0]
    assert item["type"] == "disambiguation"
    assert item["questions"][0]["text"].startswith("How long")


def test_interruption_critical_skill_hands_off_to_the_guardian(corpus, seed_skills, skill_specs):
    outcome = route(
        message="a lavoura tem erosão em sulcos depois da chuva",
        skills=seed_skills,
        corpus=corpus,
        skill_catalog=skill_specs,
    )
    assert outcome.activated_skills == ["erosao_avancada"]
    (item,) = outcome.interruptions
    assert item == {**item, "type": "guardian_handoff", "skill": "erosao_avancada", "agent": "agente_guardiao"}
    assert outcome.steps == []


def test_an_active_critical_profile_skill_hands_off_before_any_retrieval(corpus, skill_specs):
    skills = [skill_specs["larga_escala_sem_assistencia"]]
    outcome = route(message=SEED_MESSAGE, skills=skills, corpus=corpus, skill_catalog=skill_specs)
    assert outcome.interruptions[0]["type"] == "guardian_handoff"
    assert outcome.hits == []


@pytest.mark.parametrize(
    "message",
    [
        "quanto calcário devo aplicar no talhão?",
        "posso usar herbicida antes da cobertura?",
        "how much lime should I apply?",
        "¿cuándo debo sembrar la soja?",
    ],
)
def test_interruption_irreversible_risk_adds_a_caveat_and_offers_escalation(corpus, seed_skills, skill_specs, message):
    outcome = route(message=message, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    risk = [i for i in outcome.interruptions if i["type"] == "irreversible_risk"]
    assert len(risk) == 1
    assert risk[0]["escalation_offer"] is True and risk[0]["caveat"]


def test_no_risk_caveat_for_a_plain_concept_question(corpus, seed_skills, skill_specs):
    outcome = route(
        message="o que é agricultura de processo?", skills=seed_skills, corpus=corpus, skill_catalog=skill_specs
    )
    assert outcome.interruptions == []
    assert outcome.strategy == "raptor"


def test_situational_skill_is_activated_by_a_symptom_and_deactivated_by_resolution(corpus, skill_specs):
    on = route(message="meu solo está compactado", skills=[], corpus=corpus, skill_catalog=skill_specs)
    assert on.activated_skills == ["compactacao_persistente"]
    assert "compactacao_persistente" in on.skills
    off = route(
        message="a compactação resolvida, e agora?",
        skills=[skill_specs["compactacao_persistente"]],
        corpus=corpus,
        skill_catalog=skill_specs,
    )
    assert off.deactivated_skills == ["compactacao_persistente"]


def test_cases_bring_their_share_of_the_evidence_after_the_chain(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    cases = next(s for s in outcome.steps if s["name"] == "casos_semelhantes")
    assert cases["role"] == "share" and cases["slots"] == 5
    assert cases["chunks"][0]["chunk_id"] == "cas_nodulacao_go_2024"


def test_the_route_is_deterministic(corpus, seed_skills, skill_specs):
    a = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs).as_dict()
    b = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs).as_dict()
    assert a == b


def test_candidates_from_postings_equal_the_matches_predicate(corpus):
    for filters in (
        FILTERS,
        CONTEXT,
        {"bioma": ["pampa"]},
        {"cultura": ["cafe"], "bioma": ["cerrado"]},
        {"classe_ontologica": ["nada"]},
        {},
    ):
        expected = [i for i, r in enumerate(corpus.records) if matches(r, filters)]
        assert corpus.candidates(filters).tolist() == expected


def test_filters_select_the_candidates_before_ranking_not_after(corpus):
    # the three best chunks overall for this query are no processes: filtering the top k
    # afterwards would return nothing; filtering first ranks the processes among themselves
    terms = analyze("baixa nodulação soja")
    filters = {"classe_ontologica": ["processo"]}
    assert not [h for h in corpus.search(terms, {}, 3) if matches(h.record, filters)]
    hits = corpus.search(terms, filters, 3)
    assert len(hits) == 3 and all(matches(h.record, filters) for h in hits)
    # the same order as scoring every candidate by hand (IDF of the whole corpus)
    cands = corpus.candidates(filters)
    full = corpus.index.scores(terms, candidates=cands)
    by_hand = sorted(zip(cands.tolist(), full.tolist()), key=lambda ps: (-ps[1], ps[0]))[:3]
    assert [h.record.chunk_id for h in hits] == [corpus.records[p].chunk_id for p, _ in by_hand]
    assert [round(h.score, 6) for h in hits] == [round(s, 6) for _, s in by_hand]


# --- RAPTOR: the summary tree and its top-down walk ---------------------------------------------


@pytest.fixture
def tree_corpus(sample_rows):
    from ontology.routing.summary_tree import SummaryTreeIndex, build_tree

    corpus = Corpus(ChunkRecord.from_seed(r) for r in sample_rows)
    corpus.tree = SummaryTreeIndex(version=1, nodes=build_tree(corpus.records))
    return corpus


def test_the_tree_has_summaries_of_branches_and_of_their_summaries(tree_corpus):
    nodes = {n.path: n for n in tree_corpus.tree.nodes}
    top, leaf = nodes["monitoramento"], nodes["monitoramento/indicadores_campo"]
    assert top.level == 1 and leaf.level == 2 and leaf.parent == "monitoramento"
    assert set(leaf.chunk_ids) <= set(top.chunk_ids)
    # extractive: every summary sentence comes from its chunks (level 2) or its children's summaries (level 1)
    leaf_texts = " ".join(tree_corpus.get(c).text for c in leaf.chunk_ids)
    assert leaf.text and all(sentence in leaf_texts for sentence in leaf.text.split(". ")[:1])
    children = " ".join(n.text for n in tree_corpus.tree.nodes if n.parent == "monitoramento")
    assert top.text.split(". ")[0] in children


@pytest.mark.parametrize(
    "query, top, child",
    [
        ("indicadores de campo para acompanhar o solo", "monitoramento", "monitoramento/indicadores_campo"),
        ("o que é agricultura de processo", "conceitos", "conceitos/principios"),
    ],
)
def test_raptor_walks_the_tree_top_down(tree_corpus, query, top, child):
    filters = {"classe_ontologica": ["conceito", "processo", "estrutura", "indicador"]}
    run = raptor(tree_corpus, analyze(query), filters)
    tree_step, chunk_step = run.steps
    assert tree_step["name"] == "raptor_arvore"
    walk = tree_step["tree"]["walk"]
    assert walk[0]["parent"] == top and walk[0]["node"] == child
    records = _records(tree_corpus, run)
    assert records[0].branch.startswith(child)
    assert all(matches(r, filters) for r in records)


def test_a_reversed_tree_ranking_is_caught(tree_corpus, monkeypatch):
    """The walk follows the summaries' ranking: reverse it and the wrong branch comes first."""
    from ontology.routing.summary_tree import SummaryTreeIndex

    original = SummaryTreeIndex.ranked
    monkeypatch.setattr(SummaryTreeIndex, "ranked", lambda self, q, allowed: list(reversed(original(self, q, allowed))))
    run = raptor(
        tree_corpus,
        analyze("indicadores de campo para acompanhar o solo"),
        {"classe_ontologica": ["indicador", "processo"]},
    )
    assert run.steps[0]["tree"]["walk"][0]["node"] != "monitoramento/indicadores_campo"
