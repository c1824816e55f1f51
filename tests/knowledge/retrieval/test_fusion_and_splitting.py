from knowledge.retrieval.fusion import estimate_tokens, weighted_rrf
from knowledge.retrieval.splitting import split_parts


def test_weighted_rrf_sums_weight_over_k_plus_rank():
    fused = weighted_rrf({"bm25": ["A", "B"], "keyword": ["B"]}, {"bm25": 1.0, "keyword": 2.0}, k=5)
    assert fused["A"] == 1 / 6
    assert fused["B"] == 1 / 7 + 2 / 6
    assert weighted_rrf({"unknown": ["A"]}, {"bm25": 1.0}) == {}


def test_token_estimate_needs_no_network_and_grows_with_text():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 100) == 100
    assert estimate_tokens("a b c d e f") == 8  # many short words: the word estimate wins


def test_multi_part_questions_split_in_three_languages():
    assert split_parts("Qual o prazo do Sanger e como envio a amostra?") == [
        "Qual o prazo do Sanger",
        "como envio a amostra",
    ]
    assert split_parts("What is the Sanger turnaround and how do I ship the sample?") == [
        "What is the Sanger turnaround",
        "how do I ship the sample",
    ]
    assert split_parts("¿Cuál es el plazo de Sanger y cómo envío la muestra?") == [
        "¿Cuál es el plazo de Sanger",
        "cómo envío la muestra",
    ]
    assert split_parts("Quanto custa o kit? Qual o prazo de entrega?") == [
        "Quanto custa o kit",
        "Qual o prazo de entrega",
    ]


def test_a_conjunction_between_single_words_does_not_split():
    assert split_parts("preço e prazo do sanger") == ["preço e prazo do sanger"]
    assert split_parts("Explique isso.") == ["Explique isso."]
    assert split_parts("") == []
