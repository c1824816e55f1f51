"""The dense signal (knowledge/retrieval/dense.py), without the database: each kept part on a question it fixes.

The catalogs are the labeled evaluation folders; their vectors come from the on-disk cache under the
var dir (computed once, ~10 s for a catalog on first use).
"""

from dataclasses import replace

import numpy as np
import pytest

from common.text import embeddings, retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, ROOT, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.dense import DenseIndex, EmbeddingCache, folder_dense_index, passage_text

pytestmark = pytest.mark.skipif(
    not retrieval_embeddings.available(), reason="the bundled embedding models are required"
)

NO_DENSE = replace(RouterConfig(), weights={**RouterConfig().weights, "dense": 0.0})


def _index(name: str, config: RouterConfig | None = None) -> RouterIndex:
    folder = ROOT / "knowledge" / "catalog" if name == "sample" else CATALOGS / name / "packages"
    entries = load_package_folder(folder)
    return RouterIndex(entries, config=config, dense=dense_of(name, entries))


@pytest.fixture(scope="module")
def hr():
    return _index("hr")


@pytest.fixture(scope="module")
def hr_lexical():
    return _index("hr", NO_DENSE)


def _unit(*values):
    v = np.zeros(retrieval_embeddings.DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def test_entries_rank_by_cosine_and_an_entry_without_a_vector_never_ranks():
    dense = DenseIndex.from_rows([_unit(1, 0), None, _unit(1, 1), _unit(0, 1)], embed_query=lambda t: _unit(1, 0.2))
    ranked, mean = dense.top_k(dense.query_vector("q"), 10)
    assert [i for i, _ in ranked] == [0, 2, 3]
    assert ranked[0][1] > ranked[1][1] > ranked[2][1]
    assert mean == pytest.approx(np.mean([s for _, s in ranked]))


def test_the_passage_is_what_the_entry_is_about_and_the_start_of_its_body():
    entry = Entry("X", "Prazos", summary="Quanto demora.", keywords=("prazo", "entrega"), body="a " * 400)
    text = passage_text(entry)
    assert text.startswith("Prazos. Quanto demora. prazo, entrega. a a")
    assert len(text) < 400


def test_a_paraphrase_sharing_no_word_with_the_entry_arrives_in_full(hr, hr_lexical):
    question = "Does the company help out if I want to hit the gym or look after my mental health?"
    assert "WELLBEING" not in hr_lexical.route(question).full_ids
    result = hr.route(question)
    assert result.full_ids[0] == "WELLBEING"
    assert any(n["signal"] == "dense" for n in result.full[0].why)


@pytest.fixture(scope="module")
def saas_pair():
    """The saas catalog routed with the shipped e5 + USE vectors, and with e5's alone at e5's settings; both
    with weak lexical hits at full weight, as the encoders were compared (the damping came later and moves
    the typo below: docs/retrieval.md, "Weak lexical hits")."""
    entries = load_package_folder(CATALOGS / "saas" / "packages")
    e5_only = DenseIndex(
        embeddings.embed_passages([passage_text(e) for e in entries]),
        np.ones(len(entries), dtype=bool),
        embed_query=embeddings.embed_query,
        model_id=embeddings.MODEL_ID,
    )
    joined_config = replace(RouterConfig(), weak_lexical_factor=1.0)
    e5_config = replace(joined_config, dense_full_lift=0.06, dense_veto_lift=0.025)
    return (
        RouterIndex(entries, config=joined_config, dense=dense_of("saas", entries)),
        RouterIndex(entries, config=e5_config, dense=e5_only),
    )


@pytest.mark.parametrize(
    "question, expected, e5_first",
    [
        ("Can I charge extra to people who pay after the due date?", "LATE_FEES", "BANK_RECONCILIATION"),
    ],
)
def test_the_second_encoder_puts_first_what_e5_alone_ranks_below_another(saas_pair, question, expected, e5_first):
    # A paraphrase in English (saas dev split): e5 alone ranks another entry first. (A chat-style typo,
    # "boleto expird client didnt pay can i make a new copy", was here too: the joined router only
    # tied its entry with CUSTOMER_REGISTRY, and catalog position, not the encoder, put it first.)
    joined, e5_only = saas_pair
    assert [d.id for d in e5_only.route(question).ranked()][0] == e5_first
    assert [d.id for d in joined.route(question).ranked()][0] == expected


@pytest.mark.parametrize(
    "catalog, question, expected, without",
    [
        # Paraphrases (dev splits): the words of the question match another entry better.
        (
            "hr",
            "A supplier wants to send me a really expensive Christmas hamper. Am I allowed to accept it?",
            "GIFTS_RULE",
            "ONBOARDING",
        ),
        (
            "hr",
            "Does the company help out if I want to hit the gym or look after my mental health?",
            "WELLBEING",
            "HARASSMENT_RULE",
        ),
        (
            "logistics",
            "I'm out at work all day. Can the doorman in my building take the package for me?",
            "RECEBIMENTO_TERCEIROS",
            "ENTREGA_NAO_RECEBIDA",
        ),
    ],
)
def test_a_dense_top_clear_of_the_runner_up_is_ranked_first(catalog, question, expected, without):
    # The dense top leads the second entry by more than ``dense_margin`` (0.02): ranked once more
    # ("dense_margin"), it is no longer outvoted by the lexical signals' pick.
    # Measured with weak lexical hits at full weight, as the margin was chosen: their damping (shipped
    # since) answers these questions too, so it is held off to show what the margin does on its own; so
    # is the whole message's meaning (index.message_meaning), which answers the two-sentence ones.
    index = _index(catalog)
    assert index.route(question).ranked()[0].id == expected  # shipped: both
    base = replace(RouterConfig(), weak_lexical_factor=1.0, weights={**RouterConfig().weights, "message": 0.0})
    off = RouterIndex(index.entries, config=replace(base, dense_margin=9.0), dense=index.dense)
    assert [d.id for d in off.route(question).ranked()][0] == without
    first = RouterIndex(index.entries, config=base, dense=index.dense).route(question).ranked()[0]
    assert first.id == expected
    assert any(n["signal"] == "dense_margin" for n in first.why)
    # Weight 0 (``KNOWLEDGE_ROUTER_WEIGHTS``) turns it off: the order and the reasons given.
    config = replace(base, weights={**base.weights, "dense_margin": 0.0})
    zero = RouterIndex(index.entries, config=config, dense=index.dense).route(question).ranked()
    assert zero[0].id == without
    assert not any(n["signal"] == "dense_margin" for d in zero for n in d.why)


def test_a_chat_style_typo_reaches_its_rule(hr, hr_lexical):
    question = "las horas extra nesesitan aprobasion del jefe antes?"
    assert "OVERTIME_RULE" not in hr_lexical.route(question).full_ids
    assert "OVERTIME_RULE" in hr.route(question).full_ids


def test_an_out_of_domain_question_close_to_no_entry_gets_nothing_in_full():
    # Near every entry alike (a small lift over the catalog's mean): the dense signal does not make it an answer.
    sample = _index("sample")
    assert sample.route("How much does a used car cost?").full_ids == []
    loose = _index("sample", replace(RouterConfig(), dense_full_lift=0.04))
    assert loose.route("How much does a used car cost?").full_ids != []


def test_a_gate_keeps_the_embedding_off_a_question_the_words_already_answer(hr, monkeypatch):
    calls = []
    original = DenseIndex.query_vector
    monkeypatch.setattr(DenseIndex, "query_vector", lambda self, text: calls.append(text) or original(self, text))
    gated = RouterIndex(hr.entries, config=replace(hr.config, dense_gate="covered"), dense=hr.dense)
    gated.route("Quantos dias de férias eu tenho por ano?")
    assert calls == []  # BM25's best entry is strong and covers the question: the 20 ms embedding is skipped
    gated.route("Does the company help out if I want to hit the gym?")
    assert len(calls) == 1


def test_a_short_part_the_words_seem_to_hold_is_still_read_for_its_meaning():
    # "quanto custam os planos depois dele": a billing-reminder article holds both of its words
    # ("custos", "planos") and BM25 finds it strong, so the "covered" gate never embedded the part
    # and the pricing article, which says "preços", was not looked for.
    # The catalog as its curators would have it, with the model's example questions accepted.
    from knowledge.offline_catalog import example_questions_file, folder_index

    folder = CATALOGS / "saas"
    examples = example_questions_file(folder / "example_questions.proposed.json")
    question = "Quantos dias tem o teste grátis e quanto custam os planos depois dele?"
    gated = folder_index(folder / "packages", replace(RouterConfig(), dense_gate="covered"), examples=examples)
    assert "PLANS_PRICING" not in gated.route(question).full_ids
    every_part = folder_index(folder / "packages", RouterConfig(), examples=examples)
    assert {"FREE_TRIAL", "PLANS_PRICING"} <= set(every_part.route(question).full_ids)


def test_by_default_every_part_is_embedded(hr, monkeypatch):
    # Chosen by leave-one-catalog-out in the sixteenth round: the meaning also checks and reorders
    # what the words found (docs/retrieval.md, "Every part embedded").
    calls = []
    original = DenseIndex.query_vector
    monkeypatch.setattr(DenseIndex, "query_vector", lambda self, text: calls.append(text) or original(self, text))
    assert RouterConfig().dense_gate == "always"
    hr.route("Quantos dias de férias eu tenho por ano?")
    assert len(calls) == 1


def test_without_the_model_the_router_is_the_lexical_one(monkeypatch, hr_lexical):
    monkeypatch.setenv("CONTEXTO_EMBEDDINGS", "off")
    entries = load_package_folder(CATALOGS / "hr" / "packages")
    assert folder_dense_index(entries, None) is None
    index = RouterIndex(entries, dense=None)
    for question in ("Does the company help out if I want to hit the gym?", "Quantos dias de férias eu tenho?"):
        assert index.route(question).as_dict()["full"] == hr_lexical.route(question).as_dict()["full"]


def test_a_folder_is_embedded_once(tmp_path, monkeypatch):
    entries = load_package_folder(ROOT / "knowledge" / "catalog")[:3]
    cache = EmbeddingCache(tmp_path)
    first = folder_dense_index(entries, cache)

    def fail(*args, **kwargs):
        raise AssertionError("re-embedded a cached passage")

    monkeypatch.setattr(retrieval_embeddings, "embed_passages", fail)
    again = folder_dense_index(entries, cache)
    assert np.array_equal(first.matrix, again.matrix)
    assert len(list(tmp_path.rglob("*.npy"))) == 3
