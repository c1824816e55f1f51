"""The example questions' words (questions.py, signals._questions_signal): BM25+ as the router computes
it, edits equal to a fresh build, and a rank-only signal for messages of one part."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from common.text import analyze
from knowledge.retrieval.delta import index_with_edits
from knowledge.retrieval.entries import Entry, RouterConfig
from knowledge.retrieval.fusion import DEFAULT_WEIGHTS
from knowledge.retrieval.index import RouterIndex, entries_digest
from knowledge.retrieval.questions import QuestionsIndex

K1, B, DELTA = 1.2, 0.75, 1.0


def _entries() -> list[Entry]:
    return [
        Entry("OFFICE_ACCESS", "Acesso ao escritório", body="Crachá, portaria e horário de acesso ao escritório."),
        Entry(
            "PET_POLICY",
            "Animais no ambiente de trabalho",
            body="Regras para animais de estimação nas dependências da empresa.",
            example_questions=(
                "Posso levar meu cachorro para o trabalho?",
                "Can I bring my dog to work?",
                "¿Puedo llevar a mi perro al trabajo?",
            ),
        ),
        Entry("PAYROLL", "Folha de pagamento", body="Datas de pagamento do salário e adiantamentos."),
        Entry(
            "PARKING",
            "Estacionamento",
            body="Vagas para carros e motos.",
            example_questions=("Onde deixo o carro?", "Tem vaga para moto?", "Posso deixar a bicicleta?"),
        ),
        Entry("VACATION", "Férias", body="Como pedir férias.", example_questions=("Quando posso tirar férias?",)),
    ]


def _brute_force(docs: list[list[str]], query: dict[str, float]) -> list[float]:
    """BM25+ as the module doc states it, term by term, over the documents that hold questions."""
    held = [d for d in docs if d]
    n, avgdl = len(held), sum(len(d) for d in held) / len(held)
    out = []
    for d in docs:
        score = 0.0
        for term, weight in query.items():
            tf = d.count(term)
            if not tf:
                continue
            df = sum(1 for other in held if term in other)
            idf = math.log((n + 1) / df)
            score += weight * idf * (DELTA + tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(d) / avgdl)))
        out.append(score)
    return out


@pytest.mark.parametrize(
    "question",
    ["Posso levar o cachorro?", "Can I bring my dog?", "Onde deixo a moto e o carro?", "posso posso férias"],
)
def test_scores_are_bm25_plus_over_the_documents_holding_questions(question):
    entries = _entries()
    index = QuestionsIndex.build(entries, k1=K1, b=B, delta=DELTA)
    query: dict[str, float] = {}
    for t in analyze(question):
        query[t] = query.get(t, 0.0) + 1.0
    docs = [[t for q in e.example_questions for t in analyze(q)] for e in entries]
    assert index.scores(query).tolist() == pytest.approx(_brute_force(docs, query), rel=1e-12)
    assert len(index) == 3


def test_top_keeps_k_entries_at_least_a_share_of_the_best_best_first():
    index = QuestionsIndex.build(_entries(), k1=K1, b=B, delta=DELTA)
    query = {t: 1.0 for t in analyze("Posso levar meu cachorro? Posso deixar o carro?")}
    scores = index.scores(query)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    assert [slot for slot, _ in index.top(query, 5, 0.0)] == order
    assert [slot for slot, _ in index.top(query, 1, 0.0)] == order[:1]
    kept = index.top(query, 5, 0.9)
    assert kept and all(score >= 0.9 * scores[order[0]] for _, score in kept)
    assert len(kept) < len(order)
    assert index.top({"inexistente": 1.0}, 3, 0.0) == []


def test_no_entry_with_questions_or_no_weight_builds_nothing():
    bare = [dataclasses.replace(e, example_questions=()) for e in _entries()]
    assert QuestionsIndex.build(bare, k1=K1, b=B, delta=DELTA) is None
    assert RouterIndex(bare).questions is None
    off = RouterConfig(weights={**DEFAULT_WEIGHTS, "questions": 0.0})
    assert RouterIndex(_entries(), config=off).questions is None


def _postings(index: QuestionsIndex | None) -> dict:
    if index is None:
        return {}
    return {t: (s.tolist(), f.tolist()) for t, (s, f) in index.postings.items()}


def test_an_edit_equals_a_fresh_build_and_shares_untouched_postings():
    before = _entries()
    base = QuestionsIndex.build(before, k1=K1, b=B, delta=DELTA)
    after = list(before)
    after[1] = dataclasses.replace(before[1], example_questions=("Meu gato pode vir comigo?",), revision=2)
    after[3] = dataclasses.replace(before[3], example_questions=())  # lost every question
    after.append(Entry("NEW", "Novo", body="x", example_questions=("Posso trazer um cachorro?",)))
    dead = [4]  # VACATION removed: its slot stays, dead
    changed = [(1, after[1]), (3, after[3]), (5, after[5])]
    edited = base.with_edits(changed, dead, before, n_slots=6)
    fresh_entries = [*after[:4], dataclasses.replace(after[4], example_questions=()), after[5]]
    fresh = QuestionsIndex.build(fresh_entries, k1=K1, b=B, delta=DELTA)
    assert _postings(edited) == _postings(fresh)
    assert edited.lengths.tolist() == fresh.lengths.tolist() and len(edited) == len(fresh) == 2
    for question in ("Posso levar o cachorro?", "gato comigo", "férias", "carro"):
        query = {t: 1.0 for t in analyze(question)}
        assert edited.scores(query).tolist() == fresh.scores(query).tolist()
    assert base.scores(_query("Posso levar o cachorro?"))[1] > 0  # the base is not changed by the edit
    assert base.with_edits([], [1, 3, 4], before, n_slots=5) is None  # no questions left


def test_an_edit_shares_the_postings_of_the_terms_it_does_not_touch():
    before = _entries()
    base = QuestionsIndex.build(before, k1=K1, b=B, delta=DELTA)
    changed = [(3, dataclasses.replace(before[3], example_questions=("Onde deixo o carro?",)))]
    edited = base.with_edits(changed, [], before, n_slots=5)
    (vacation,) = set(analyze("férias")) & set(base.postings)
    assert edited.postings[vacation] is base.postings[vacation]
    (moto,) = set(analyze("moto"))
    assert moto in base.postings and moto not in edited.postings


def _query(text: str) -> dict[str, float]:
    return {t: 1.0 for t in analyze(text)}


def _with_kennel() -> list[Entry]:
    """PET_POLICY's title and body share no word with "Posso vir com meu cachorro?"; its example question
    does, and KENNEL (which the catalog's text ties to "cachorro") is the lexical decoy."""
    entries = _entries()
    entries[1] = dataclasses.replace(entries[1], example_questions=("Posso vir com meu cachorro?",))
    return [*entries, Entry("KENNEL", "Convênio com hotel para cachorro", body="Desconto em hotel para cães.")]


def _delivered(result) -> dict:
    return {d.id: d for d in [*result.full, *result.listed]}


def test_a_one_part_question_reaches_the_entry_whose_example_questions_it_shares():
    question = "Posso vir com meu cachorro?"
    result = RouterIndex(_with_kennel()).route(question)
    delivered = _delivered(result)
    assert "PET_POLICY" in delivered
    assert "PET_POLICY" not in {d.id for d in result.full}  # rank only: never a full body
    assert [w["signal"] for w in delivered["PET_POLICY"].why] == ["questions"]
    off = RouterIndex(_with_kennel(), config=RouterConfig(weights={**DEFAULT_WEIGHTS, "questions": 0.0}))
    assert "PET_POLICY" not in _delivered(off.route(question))


def test_a_message_of_several_parts_routes_without_the_signal():
    index = RouterIndex(_with_kennel())
    several = index.route("Posso vir com meu cachorro? E qual o horário de acesso ao escritório?")
    assert len(several.parts) == 2
    assert "PET_POLICY" not in _delivered(several)
    assert not any(w["signal"] == "questions" for d in _delivered(several).values() for w in d.why)


def test_the_words_as_typed_count_when_asked():
    """ "vir" is in no package's text (an unknown word to the main index): only the typed words reach it."""
    entries = _with_kennel()
    entries[5] = dataclasses.replace(entries[5], title="Convênio com hotel")  # "cachorro" unknown too
    question = "Posso vir com meu cachorro?"
    known_only = RouterIndex(entries, config=RouterConfig(questions_typed_terms=False))
    assert "PET_POLICY" not in _delivered(known_only.route(question))
    typed = RouterIndex(entries)
    assert [w["signal"] for w in _delivered(typed.route(question))["PET_POLICY"].why] == ["questions"]


def test_a_delta_routes_like_a_fresh_build_when_questions_change():
    entries = _entries()
    base = RouterIndex(entries)
    edited = list(entries)
    edited[2] = dataclasses.replace(entries[2], example_questions=("Quando cai o salário?", "Tem adiantamento?"))
    edited[1] = dataclasses.replace(entries[1], example_questions=())
    delta = index_with_edits(base, edited, version=2, max_changes=10)
    fresh = RouterIndex(edited)
    assert delta is not None and delta.delta_base is base
    for question in ("Quando cai o salário?", "Posso levar meu cachorro para o escritório?"):
        got, want = delta.route(question), fresh.route(question)
        assert [d.id for d in got.listed] == [d.id for d in want.listed]
        assert [d.id for d in got.full] == [d.id for d in want.full]
    assert delta.questions.scores(_query("salário"))[delta.position["PAYROLL"]] > 0
    assert not delta.questions.scores(_query("cachorro")).any()  # PET_POLICY's questions are gone
    # A base without questions gains them through an edit.
    bare = RouterIndex([dataclasses.replace(e, example_questions=()) for e in entries])
    gained = index_with_edits(bare, entries, version=3, max_changes=10)
    assert gained.questions is not None and _postings(gained.questions) == _postings(RouterIndex(entries).questions)


def test_the_questions_enter_the_entries_digest_only_when_present():
    entries = _entries()
    bare = [dataclasses.replace(e, example_questions=()) for e in entries]
    assert entries_digest(entries) != entries_digest(bare)
    changed = list(entries)
    changed[3] = dataclasses.replace(entries[3], example_questions=("Onde deixo o carro?",))
    assert entries_digest(changed) != entries_digest(entries)
    # An entry type without the attribute digests as an entry without questions.
    assert entries_digest(bare[:1]) == entries_digest([_Plain(bare[0])])


class _Plain:
    def __init__(self, e: Entry):
        for f in dataclasses.fields(e):
            if f.name != "example_questions":
                setattr(self, f.name, getattr(e, f.name))


def test_a_tie_goes_to_the_same_entry_in_a_delta_and_in_a_fresh_build():
    # A delta appends an inserted entry's slot; a fresh build places it in catalog order. Ties go by ID.
    base_entries = [
        Entry("A", "Acesso", body="Crachá e portaria."),
        Entry("B", "Boletos", body="Segunda via de cobrança.", example_questions=("Perdi o papel da taxa",)),
    ]
    inserted = Entry("NEW", "Multas", body="Advertências e penalidades.", example_questions=("Recebi papel da multa",))
    edited = [base_entries[0], inserted, base_entries[1]]
    base = RouterIndex(base_entries)
    delta = index_with_edits(base, edited, version=2, max_changes=10)
    fresh = RouterIndex(edited)
    question = "onde mando o papel?"
    scores = fresh.questions.scores(_query(question))
    assert scores[1] == scores[2] > 0  # NEW and B tie
    for index in (delta, fresh):
        assert [w["signal"] for w in _delivered(index.route(question))["B"].why] == ["questions"]
        assert "NEW" not in _delivered(index.route(question))
    assert fresh.questions.top(_query(question), 2, 0.0, lambda i: edited[i].package_id)[0][0] == 2


def test_an_edit_after_the_base_has_answered_scores_like_fresh_builds():
    # Posting weights are kept per index on first use: the base's must not leak into its delta's.
    entries = _entries()
    base = RouterIndex(entries)
    asked = ("Posso levar meu cachorro para o trabalho?", "Onde deixo o carro?", "Quando posso tirar férias?")
    before = [base.questions.scores(_query(q)).tolist() for q in asked]  # the base's weights filled in
    edited = [*entries, Entry("NEW", "Novo", body="x", example_questions=("Posso deixar o carro na vaga?",))]
    edited[3] = dataclasses.replace(entries[3], example_questions=("Tem vaga para moto?",))
    delta = index_with_edits(base, edited, version=2, max_changes=10)
    fresh = RouterIndex(edited)
    for q in asked:
        assert delta.questions.scores(_query(q)).tolist() == fresh.questions.scores(_query(q)).tolist()
    assert [base.questions.scores(_query(q)).tolist() for q in asked] == before
