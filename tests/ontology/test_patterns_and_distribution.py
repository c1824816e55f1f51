"""Pure routing: the query-pattern classifier, the strategy matrix with skill priors, filters."""

import pytest

from ontology.routing.data import patterns_file, skills_file
from ontology.routing.distribution import context_filters, route_filters, strategy_distribution
from ontology.routing.patterns import classify

from .conftest import SEED_MESSAGE


def test_seed_example_pattern_distribution_and_filters_are_exactly_the_seeds(seed_skills):
    match = classify(SEED_MESSAGE)
    assert match.pattern == "diagnosis"
    assert not match.fallback
    distribution = strategy_distribution(match.pattern, seed_skills)
    assert distribution == {"multi_hop_guiado": 0.60, "casos_semelhantes": 0.25, "hibrida": 0.10, "raptor": 0.05}
    assert list(distribution) == ["multi_hop_guiado", "casos_semelhantes", "hibrida", "raptor"]
    assert route_filters(match.pattern, context_filters(seed_skills, SEED_MESSAGE)) == {
        "bioma": ["cerrado"],
        "cultura": ["soja"],
        "classe_ontologica": ["sintoma", "causa_provavel", "processo", "intervencao"],
    }


def test_seed_skill_bioma_cerrado_is_the_seeds_example():
    skill = next(s for s in skills_file()["skills"] if s["id"] == "bioma_cerrado")
    assert skill == {
        "id": "bioma_cerrado",
        "categoria": "contexto_territorial",
        "classe_ontologica": "Agroecossistema",
        "rag_bias": {"graphrag": 0.45, "casos_semelhantes": 0.30, "hibrida": 0.15, "raptor": 0.10},
        "filtros_indexacao": {"bioma": "cerrado", "agroecorregiao": "*"},
        "tier_minimo": "semente",
        "agente_inferencia": "diagnostico_territorial",
        "versao": "2026.05.01",
    }


@pytest.mark.parametrize("pattern", list(patterns_file()["patterns"]))
def test_without_skills_the_distribution_is_the_matrix_row(pattern):
    row = patterns_file()["patterns"][pattern]["weights"]
    assert strategy_distribution(pattern, []) == row
    assert len(row) == 3 and abs(sum(row.values()) - 1) < 1e-9


@pytest.mark.parametrize("pattern", list(patterns_file()["patterns"]))
def test_skills_shift_the_alternatives_but_keep_the_canonical_share_and_sum_to_one(pattern, skill_specs):
    spec = patterns_file()["patterns"][pattern]
    dist = strategy_distribution(pattern, list(skill_specs.values()))
    assert dist[spec["canonical"]] == spec["weights"][spec["canonical"]]
    assert next(iter(dist)) == spec["canonical"]
    assert abs(sum(dist.values()) - 1) < 1e-3
    assert not set(dist) & set(spec["excluded"])


def test_a_skills_bias_moves_weight_towards_its_strategy(skill_specs):
    base = strategy_distribution("diagnosis", [skill_specs["produtor_rural"]])
    cases = strategy_distribution("diagnosis", [skill_specs["transicao_em_curso"]])
    assert cases["casos_semelhantes"] > base["casos_semelhantes"]


def test_diagnosis_excludes_free_graph_expansion_even_when_a_skill_biases_it(skill_specs):
    dist = strategy_distribution("diagnosis", [skill_specs["bioma_cerrado"]])
    assert "graphrag" not in dist


@pytest.mark.parametrize(
    "message, pattern",
    [
        (SEED_MESSAGE, "diagnosis"),
        ("my soybeans have yellow leaves", "diagnosis"),
        ("mi suelo está compactado y las hojas amarillas", "diagnosis"),
        ("como melhorar a nodulação da soja?", "recommendation"),
        ("what should I plant as a cover crop after soybean?", "recommendation"),
        ("¿qué debo hacer para recuperar el suelo?", "recommendation"),
        ("o que é agricultura de processo?", "concept"),
        ("what is soil health?", "concept"),
        ("¿qué es la agricultura regenerativa?", "concept"),
        ("qual a diferença entre escarificação e descompactação biológica?", "comparison"),
        ("difference between tillage and cover crops", "comparison"),
        ("diferencia entre siembra directa y labranza", "comparison"),
        ("como medir a infiltração do solo?", "monitoring"),
        ("which indicators should I track for soil biology?", "monitoring"),
        ("¿cómo medir la materia orgánica?", "monitoring"),
        ("alguém já recuperou solo compactado?", "similar_cases"),
        ("examples of other farmers who used cover crops", "similar_cases"),
        ("experiencias de otros productores con cultivos de cobertura", "similar_cases"),
    ],
)
def test_pattern_classifier_in_portuguese_english_and_spanish(message, pattern):
    match = classify(message)
    assert match.pattern == pattern, match.scores
    assert 0 < match.confidence <= 1


def test_a_topic_without_a_question_is_a_fallback_with_a_runner_up():
    match = classify("soja cerrado")
    assert match.fallback
    assert match.runner_up and match.runner_up != match.pattern


def test_the_classifier_is_deterministic():
    assert classify(SEED_MESSAGE) == classify(SEED_MESSAGE)


def test_filters_union_skills_ignore_wildcards_and_the_message_narrows_the_crop(skill_specs):
    skills = [skill_specs["bioma_cerrado"], skill_specs["graos_soja_milho"], skill_specs["sistema_consolidado"]]
    assert context_filters(skills, "como está meu milho?") == {
        "bioma": ["cerrado"],
        "cultura": ["milho"],
        "estagio_transicao": ["transicao_avancada", "regenerativo"],
    }
    assert context_filters(skills, "adubação verde")["cultura"] == ["soja", "milho"]
    assert "agroecorregiao" not in context_filters(skills, "x")
