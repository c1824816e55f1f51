"""A part of a multi-part message gets its best entry in full when words and meaning agree on it (issue 12).

A part is short, so its coverage rarely reaches the full threshold: "When is the December graduation
ceremony" (a university dev-split question's first part) had its answer listed only.
"""

from dataclasses import replace

import pytest

from common.text import retrieval_embeddings
from knowledge.evaluation.tune import CATALOGS, dense_of
from knowledge.offline_catalog import load_package_folder
from knowledge.retrieval import RouterConfig, RouterIndex

pytestmark = pytest.mark.skipif(
    not retrieval_embeddings.available(), reason="the bundled embedding models are required"
)

QUESTION = "When is the December graduation ceremony, and how long after it is the diploma issued?"


@pytest.fixture(scope="module")
def university():
    entries = load_package_folder(CATALOGS / "university" / "packages")
    return entries, dense_of("university", entries)


def test_each_parts_best_arrives_in_full_when_words_and_meaning_agree(university):
    entries, dense = university
    off = RouterIndex(entries, config=replace(RouterConfig(), multipart_full_lift=9.0), dense=dense).route(QUESTION)
    assert len(off.parts) == 2 and off.full_ids == ["EMISSAO_DIPLOMA"]
    result = RouterIndex(entries, dense=dense).route(QUESTION)
    assert set(result.full_ids) == {"EMISSAO_DIPLOMA", "COLACAO_GRAU"}
    colacao = next(d for d in result.full if d.id == "COLACAO_GRAU")
    assert any(n["signal"] == "multipart" for n in colacao.why)


def test_a_one_part_question_is_not_given_the_multipart_rule(university):
    entries, dense = university
    one = RouterIndex(entries, dense=dense).route("When is the December graduation ceremony?")
    assert not any(n["signal"] == "multipart" for d in one.full for n in d.why)
