"""Chat shorthand of function words is read as the words it stands for: stop words (issue 12).

"qto", "pq", "hv", "didn't" were terms no entry holds, so they counted against the question's coverage
and a chat-style question lost the full body its plain wording gets (docs/retrieval.md, "Chat shorthand").
"""

import pytest

from common.text import analyze, retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import RouterIndex


@pytest.mark.parametrize(
    "chat, plain",
    [
        ("qto custa a 2a via pq perdi", "quanto custa a 2a via porque perdi"),
        ("vc sabe ate qdo da pra trancar", "você sabe até quando dá para trancar"),
        ("do i hv to do it b4 the due date", "do i have to do it before the due date"),
        ("the client didn't pay and i dont know", "the client did not pay and i do not know"),
        ("se puede mandar x el expreso tmb? dnd?", "se puede mandar por el expreso también? donde?"),
    ],
)
def test_shorthand_analyzes_as_its_plain_wording(chat, plain):
    assert analyze(chat) == analyze(plain)


@pytest.mark.parametrize("text, term", [("plano Pro", "pro"), ("caixa de 10 cm", "cm"), ("AI no suporte", "ai")])
def test_shorthand_that_can_be_a_content_word_is_kept(text, term):
    assert term in analyze(text)


@pytest.mark.skipif(not retrieval_embeddings.available(), reason="the bundled embedding models are required")
@pytest.mark.parametrize(
    "catalog, question, expected",
    [
        (
            "insurance",
            "my policy runs out next month, does it renew by itself or do i hv to do smth?",
            "RENOVACAO_APOLICE",
        ),
        ("university", "qto custa a 2a via da carterinha pq perdi a minha", "CARTEIRA_ESTUDANTIL"),
    ],
)
def test_a_chat_style_question_gets_its_answer_in_full(catalog, question, expected):
    # Dev-split typo questions: the answer was first but only listed while the shorthand counted as unknown.
    entries = load_package_folder(CATALOGS / catalog / "packages")
    result = RouterIndex(entries, dense=dense_of(catalog, entries)).route(question)
    assert result.full_ids[:1] == [expected]
