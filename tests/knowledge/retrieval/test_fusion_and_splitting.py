import pytest

from knowledge.retrieval.fusion import estimate_tokens, weighted_rrf
from common.text import analyze
from knowledge.retrieval.splitting import split_parts, split_parts_analyzed


def test_weighted_rrf_sums_weight_over_k_plus_rank():
    fused = weighted_rrf({"bm25": ["A", "B"], "keyword": ["B"]}, {"bm25": 1.0, "keyword": 2.0}, k=5)
    assert fused["A"] == 1 / 6
    assert fused["B"] == 1 / 7 + 2 / 6
    assert weighted_rrf({"unknown": ["A"]}, {"bm25": 1.0}) == {}


def test_weighted_rrf_adds_the_same_floats_as_dividing_at_each_rank():
    import random

    rng = random.Random(3)
    weights = {"a": 2.0, "b": 0.6, "c": 6, "d": 0.0, "e": 1.5}
    for _ in range(300):
        rankings = {s: [rng.randrange(40) for _ in range(rng.randint(0, 150))] for s in rng.sample(list(weights), 3)}
        k = rng.choice([5, 5.0, 60, 2.5])
        plain: dict = {}
        for signal, ranked in rankings.items():
            weight = weights[signal]
            if weight:
                for rank, key in enumerate(ranked, start=1):  # repeats within a ranking add again
                    plain[key] = plain.get(key, 0.0) + weight / (k + rank)
        assert weighted_rrf(rankings, weights, k) == plain


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


# Splitting bugs found reading the dev splits' multi-part failures (issue 12).


@pytest.mark.parametrize(
    "message,parts",
    [
        (
            "Quanto custa o passaporte Europa e, antes de ir, quanto pago por minuto para ligar para Lisboa?",
            ["Quanto custa o passaporte Europa", "antes de ir, quanto pago por minuto para ligar para Lisboa"],
        ),
        (
            "I need to switch my son to another municipal school and, while I'm at it, change health posts.",
            ["I need to switch my son to another municipal school", "while I'm at it, change health posts"],
        ),
        (
            "Tengo que cambiar a mi hijo de escuela municipal y, de paso, cambiar de centro de salud.",
            ["Tengo que cambiar a mi hijo de escuela municipal", "de paso, cambiar de centro de salud"],
        ),
    ],
)
def test_a_comma_after_the_conjunction_still_splits(message, parts):
    assert split_parts(message) == parts


@pytest.mark.parametrize(
    "message,parts",
    [
        (
            "I want to pay this year's IPTU in instalments, and I also need the clearance certificate.",
            ["I want to pay this year's IPTU in instalments", "I also need the clearance certificate"],
        ),
        (
            "Quero parcelar o IPTU deste ano e eu além disso preciso da certidão negativa de débitos.",
            ["Quero parcelar o IPTU deste ano", "eu além disso preciso da certidão negativa de débitos"],
        ),
        (
            "Quiero pagar el IPTU del año en cuotas y yo además necesito el certificado de deudas.",
            ["Quiero pagar el IPTU del año en cuotas", "yo además necesito el certificado de deudas"],
        ),
    ],
)
def test_a_word_without_content_between_two_conjunctions_opens_the_next_part(message, parts):
    # "…, and I also need…" was cut at "and" and at "also", and the lone "I" was joined back to
    # the first part with a Portuguese " e " ("… in instalments e I").
    assert split_parts(message) == parts


@pytest.mark.parametrize(
    "message",
    ["Sanger and qPCR prices and deadlines", "precios y plazos de Sanger y qPCR", "preço, e prazo do Sanger"],
)
def test_a_part_that_is_not_split_keeps_the_original_text(message):
    assert split_parts(message) == [message]


@pytest.mark.parametrize(
    "message,parts",
    [
        (
            "Quero parcelar o IPTU e preciso da certidão para vender a casa. Como funciona cada um?",
            ["Quero parcelar o IPTU", "preciso da certidão para vender a casa"],
        ),
        (
            "I need the school transfer and a new health post. How does each one work?",
            ["I need the school transfer", "a new health post"],
        ),
        (
            "Tengo que cambiar de escuela y de centro de salud. ¿Cómo funciona cada cosa?",
            ["Tengo que cambiar de escuela", "de centro de salud"],
        ),
        (
            "Quiero pagar el IPTU en cuotas y sacar el certificado de deudas. ¿Cómo hago las dos cosas?",
            ["Quiero pagar el IPTU en cuotas", "sacar el certificado de deudas"],
        ),
    ],
)
def test_a_sentence_that_only_points_back_at_the_parts_is_not_a_part(message, parts):
    # "¿Cómo funciona cada cosa?" was a part of its own: "funciona" alone brought the business
    # licence (ALVARA_FUNCIONAMENTO) in full into a question about schools and health posts.
    assert split_parts(message) == parts


def test_a_content_free_sentence_stays_with_its_neighbour_in_the_original_words():
    assert split_parts("Quanto custa o Sanger? Obrigado!") == ["Quanto custa o Sanger? Obrigado"]
    assert split_parts("Quanto custa o Sanger e qual o prazo? Obrigado!") == [
        "Quanto custa o Sanger",
        "qual o prazo? Obrigado",
    ]
    # Alone, a sentence that would point back at other parts is the question ("Como funciona isso?").
    assert split_parts("Como funciona cada um?") == ["Como funciona cada um"]
    assert split_parts("Olá! Como funciona isso?") == ["Como funciona isso"]


@pytest.mark.parametrize(
    "message",
    [
        "Qual o prazo do Sanger?",
        "  prazo do sanger  ",
        "Qual o prazo do Sanger e como envio a amostra?",
        "preço e prazo do sanger",
        "Quanto custa o kit? Qual o prazo de entrega?",
        "Quanto custa o Sanger? Obrigado!",
        "Quanto custa o Sanger e qual o prazo? Obrigado!",
        "Olá! Como funciona isso?",
        "Como funciona cada um?",
        "Quero parcelar o IPTU e preciso da certidão para vender a casa. Como funciona cada um?",
        "Um? Dois três? Quatro cinco? Seis sete? Oito nove? Dez onze?",  # past MAX_PARTS: the last is merged
        "Obrigado!",
        "",
    ],
)
def test_the_terms_a_split_hands_on_are_the_parts_own(message):
    # The router reads a part's terms from the split when it analyzed exactly that sentence.
    analyzed = split_parts_analyzed(message)
    assert [text for text, _ in analyzed] == split_parts(message)
    for text, terms in analyzed:
        assert terms is None or terms == analyze(text)
    if message.strip() == "Qual o prazo do Sanger?" or message == "  prazo do sanger  ":
        assert analyzed[0][1] is not None  # the one-question message is not analyzed twice


def test_the_splitting_patterns_match_exactly_what_their_plain_spellings_match():
    # The patterns are spelt so the regex engine can skip to candidate characters; these are the
    # plain spellings they replace. Same spans on random text rich in what they look for, also
    # searched between positions (as the conjunction pattern is, sentence by sentence).
    import random
    import re

    from knowledge.retrieval import splitting

    plain_sentence = re.compile(r"[?!;\n]+|(?<=[^\d\s])\.(?=\s|$)")
    plain_conjunction = re.compile(
        r"\s*,?\s+(?:e\s+também|e\s+tambem|além\s+disso|alem\s+disso|e|and\s+also|and|also|"
        r"y\s+también|y\s+tambien|además|ademas|y|e\s+ainda)(?:\s*,)?\s+",
        re.IGNORECASE,
    )
    pieces = [" ", "  ", "\t", "\u00a0", "\u2003", ",", ", ", " ,", ".", "?", "!", ";", "\n", "1", "9", "e", "E"]
    pieces += ["a", "y", "Y", "and", "AND", "also", "além", "ALÉM", "disso", "também", "tambem", "ainda"]
    pieces += ["además", "x", "prazo", "ç", "_", "-", "..", "?!", "e.", "3."]
    rng = random.Random(17)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        start = rng.randint(0, len(text))
        end = rng.randint(start, len(text))
        assert [m.span() for m in splitting._SENTENCE_RE.finditer(text)] == [
            m.span() for m in plain_sentence.finditer(text)
        ]
        assert [m.span() for m in splitting._CONJUNCTION_RE.finditer(text, start, end)] == [
            m.span() for m in plain_conjunction.finditer(text, start, end)
        ]
