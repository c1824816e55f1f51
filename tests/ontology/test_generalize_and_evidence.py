"""Routing that generalizes (learned classifiers, held-out figures, fallback), skills by
meaning, the guardian's scope, the distribution deciding the evidence, per-pattern templates."""

import dataclasses
import json

import pytest

from ontology.routing import evaluation
from ontology.routing.classifier import propose_class, training_chunks
from ontology.routing.engine import route
from ontology.routing.evidence import allocate_slots, split_evenly
from ontology.routing.patterns import classify, training_examples

from .conftest import CLOSE_TOP_TWO, SEED_MESSAGE

# Held-out figures on the independent authors' *test* splits, by the served models (term
# features + multilingual sentence embeddings, trained on the bundled data + dev + train + the
# third author's agro dev split). Each evaluated once after every choice was fixed by CV:
# patterns 0.9885 (pt 0.990, en 0.972, es 1.0); chunk class 0.8732 on the first author's test
# split (71) and 0.8852 on the third author's (122, ontology/data/agro/, never trained on) —
# grouped CV on the training data is 0.80 (docs/ontology.md). The issue's floors are pattern
# >= 0.90 and chunk class >= 0.85: both met. The thresholds leave room for one flip (71 chunks)
# or four (122) from numeric differences between machines, and fail for the previous models
# (0.833 patterns; 0.803 chunks) or a constant (1/6, 1/16).
PATTERN_FLOOR_TARGET, PATTERN_REACHED = 0.90, 0.97
CHUNK_FLOOR_TARGET = 0.85
AGRO_TEST_FILE = evaluation.DATA_DIR / "agro" / "chunks.test.jsonl"


def test_held_out_pattern_accuracy_on_the_test_split():
    figures = evaluation.patterns_test()
    assert figures.n == 174
    assert figures.accuracy >= max(PATTERN_REACHED, PATTERN_FLOOR_TARGET)
    # every pattern is recognised on held-out questions, in all three languages
    assert all(row["recall"] >= 0.9 for row in figures.per_label.values())
    assert set(figures.extra["by_language"]) == {"pt", "en", "es"}
    assert min(figures.extra["by_language"].values()) >= 0.95


def test_held_out_chunk_class_accuracy_on_the_test_split():
    figures = evaluation.chunks_test()
    assert figures.n == 71
    assert figures.accuracy >= CHUNK_FLOOR_TARGET


def test_held_out_chunk_class_accuracy_on_a_third_authors_test_split():
    figures = evaluation.chunks_test(path=AGRO_TEST_FILE)
    assert figures.n == 122
    assert figures.accuracy >= CHUNK_FLOOR_TARGET


def test_the_models_never_train_on_the_test_split():
    test_texts = {i["text"] for i in json.loads((evaluation.EVAL_DIR / "patterns.test.json").read_text())}
    assert not test_texts & {t for t, _ in training_examples()}
    test_chunks = {t for t, _, _ in evaluation.read_labeled(evaluation.EVAL_DIR / "chunks.test.jsonl")}
    test_chunks |= {t for t, _, _ in evaluation.read_labeled(AGRO_TEST_FILE)}
    assert len(test_chunks) == 71 + 122
    assert not test_chunks & {t for t, _, _ in training_chunks()}


@pytest.mark.parametrize(
    "message, pattern",
    [
        ("Crotalária ou feijão-guandu, qual segura mais o solo?", "comparison"),
        ("Alguém na região já fez isso?", "similar_cases"),
        ("Por que o milho está acamando?", "diagnosis"),
        ("O que é agregação do solo?", "concept"),
    ],
)
def test_the_issues_silent_fallbacks_are_now_recognised(message, pattern):
    match = classify(message)
    assert (match.pattern, match.fallback) == (pattern, False)
    assert match.confidence > 0.5


def test_the_chunk_classifier_reads_the_whole_text_not_its_opening():
    text = (
        "Na fazenda do Sr. Antônio, em Rio Verde, eu acompanhei três safras com mix de cobertura: "
        "a soja passou a segurar o veranico e o vizinho, que não mudou nada, colheu menos."
    )
    assert propose_class(text).class_id == "caso"
    assert propose_class(" ".join(text.split()[4:])).class_id == "caso"


def test_close_top_two_patterns_say_fallback_and_the_route_asks_one_question(corpus, skill_specs):
    outcome = route(message=CLOSE_TOP_TWO, skills=[], corpus=corpus, skill_catalog=skill_specs)
    assert outcome.fallback and outcome.runner_up and outcome.runner_up != outcome.pattern
    first = outcome.interruptions[0]
    assert first["type"] == "clarifying_question" and first["reason"] == "pattern_uncertain"
    assert first["candidates"] == [outcome.pattern, outcome.runner_up]
    (question,) = first["questions"]
    assert question["text"].startswith("Para eu responder do jeito certo")
    assert outcome.as_dict()["fallback"] is True and outcome.as_dict()["runner_up"] == outcome.runner_up


def test_a_clear_question_asks_nothing(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    assert not outcome.fallback
    assert not [i for i in outcome.interruptions if i.get("reason") == "pattern_uncertain"]


@pytest.mark.parametrize(
    "message",
    [
        "a erosão já foi controlada",
        "já controlamos a erosão",
        "the erosion is under control now",
        "la erosión ya está controlada",
    ],
)
def test_a_critical_situational_skill_is_left_by_meaning(corpus, skill_specs, message):
    outcome = route(message=message, skills=[skill_specs["erosao_avancada"]], corpus=corpus, skill_catalog=skill_specs)
    assert outcome.deactivated_skills == ["erosao_avancada"]
    assert "erosao_avancada" not in outcome.skills


def test_a_negated_resolution_keeps_the_skill(corpus, skill_specs):
    outcome = route(
        message="a erosão ainda não foi controlada",
        skills=[skill_specs["erosao_avancada"]],
        corpus=corpus,
        skill_catalog=skill_specs,
    )
    assert outcome.deactivated_skills == []


def test_a_symptom_switches_its_skill_on_in_any_word_order(corpus, skill_specs):
    outcome = route(
        message="apareceram sulcos de erosão no talhão", skills=[], corpus=corpus, skill_catalog=skill_specs
    )
    assert "erosao_avancada" in outcome.activated_skills


def test_the_guardian_interrupts_a_diagnosis_only(corpus, skill_specs):
    critical = [skill_specs["erosao_avancada"]]
    concept = route(message="O que é agregação do solo?", skills=critical, corpus=corpus, skill_catalog=skill_specs)
    assert concept.pattern == "concept"
    assert not [i for i in concept.interruptions if i["type"] == "guardian_handoff"]
    assert concept.hits
    diagnosis = route(message=SEED_MESSAGE, skills=critical, corpus=corpus, skill_catalog=skill_specs)
    assert diagnosis.interruptions[0]["type"] == "guardian_handoff" and diagnosis.hits == []


def test_the_seeds_distribution_shares_twenty_evidence_slots():
    seed = {"multi_hop_guiado": 0.60, "casos_semelhantes": 0.25, "hibrida": 0.10, "raptor": 0.05}
    assert allocate_slots(seed, 20) == {"multi_hop_guiado": 12, "casos_semelhantes": 5, "hibrida": 2, "raptor": 1}
    assert sum(allocate_slots({"a": 0.34, "b": 0.33, "c": 0.33}, 7).values()) == 7
    assert split_evenly(12, 7) == [2, 2, 2, 2, 2, 1, 1]


def test_every_delivered_chunk_says_which_strategy_brought_it(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    assert outcome.budget == {"multi_hop_guiado": 12, "casos_semelhantes": 5, "hibrida": 2, "raptor": 1}
    by_strategy = {}
    for item in outcome.evidence:
        by_strategy.setdefault(item["strategy"], []).append(item["chunk_id"])
    assert set(by_strategy) == {"multi_hop_guiado", "casos_semelhantes", "hibrida", "raptor"}
    assert all(len(ids) <= outcome.budget[s] for s, ids in by_strategy.items())
    assert len(by_strategy["casos_semelhantes"]) == 5
    assert {e["chunk_id"] for e in outcome.evidence} == set(outcome.chunk_ids)
    for step in outcome.steps:
        assert all(c["brought_by"] == step["strategy"] for c in step["chunks"])


def test_a_skills_rag_bias_changes_the_chunks_delivered(corpus, seed_skills, skill_specs):
    base = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    # the same profile, but the transition skill now leans on hybrid search only
    leaning = [
        dataclasses.replace(s, rag_bias={"hibrida": 1.0}) if s.id == "transicao_em_curso" else s for s in seed_skills
    ]
    shifted = route(message=SEED_MESSAGE, skills=leaning, corpus=corpus, skill_catalog=skill_specs)
    assert shifted.distribution["hibrida"] > base.distribution["hibrida"]
    hybrid = lambda o: [e for e in o.evidence if e["strategy"] == "hibrida"]  # noqa: E731
    assert len(hybrid(shifted)) > len(hybrid(base))
    assert set(shifted.chunk_ids) != set(base.chunk_ids)


def test_a_zero_weight_strategy_brings_nothing(corpus, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=[], corpus=corpus, skill_catalog=skill_specs)
    assert "raptor" not in outcome.distribution
    assert not [e for e in outcome.evidence if e["strategy"] == "raptor"]


@pytest.mark.parametrize(
    "message, pattern, steps",
    [
        (
            "Qual mix de cobertura planto depois da soja?",
            "recommendation",
            ["situacao", "opcoes", "tradeoffs", "recomendacao"],
        ),
        ("Como sei se a matéria orgânica está subindo?", "monitoring", ["indicador", "leitura", "acao"]),
        ("O que é agregação do solo?", "concept", ["definicao", "mecanismo", "exemplo"]),
        ("Alguém na região já fez isso com mix de cobertura?", "similar_cases", ["casos", "resultados", "praticas"]),
    ],
)
def test_each_pattern_runs_its_own_template_and_each_step_retrieves_its_evidence(
    corpus, seed_skills, skill_specs, message, pattern, steps
):
    outcome = route(message=message, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    assert outcome.pattern == pattern
    template = [s for s in outcome.steps if s["role"] == "template"]
    assert [s["name"] for s in template] == steps
    for step in template:
        allowed = set(step["filters"]["classe_ontologica"])
        assert all(c["classe_ontologica"] in allowed for c in step["chunks"])
    assert sum(1 for s in template if s["chunks"]) >= len(steps) - 1
    # each step after the first is fed by what the previous one found
    fed = [s for s in template[1:] if s["uses"]["chunks"]]
    assert fed


def test_diagnosis_runs_the_full_seven_step_chain(corpus, seed_skills, skill_specs):
    outcome = route(message=SEED_MESSAGE, skills=seed_skills, corpus=corpus, skill_catalog=skill_specs)
    chain = [s["name"] for s in outcome.steps if s["role"] == "template"]
    assert chain == ["sintoma", "causa_provavel", "processo", "estrutura", "intervencao", "pratica", "indicador"]


def test_the_recommendation_template_ends_with_a_caveat_step(corpus, seed_skills, skill_specs):
    outcome = route(
        message="Qual mix de cobertura planto depois da soja?",
        skills=seed_skills,
        corpus=corpus,
        skill_catalog=skill_specs,
    )
    last = [s for s in outcome.steps if s["role"] == "template"][-1]
    assert last["name"] == "recomendacao" and last["caveat"] is True
    assert "Forma da resposta" in outcome.render_context()
