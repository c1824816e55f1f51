"""explanations.numbers.grounding: an agent reply's numbers against what its turn delivered (pure)."""

from explanations.numbers.grounding import SKIPPED_GROUNDING, ground_reply


def unmatched(reply, *sources):
    return [(n.text, n.reason) for n in ground_reply(reply, sources).unmatched]


def test_numbers_in_the_delivered_texts_are_grounded_with_or_without_a_unit():
    sources = ["Taxa de urgência: 120", "Prazo: 5 dias úteis.", "Desconto de 10% acima de R$ 2 mil"]
    assert ground_reply(
        "A taxa é R$ 120,00 e o prazo, 5 dias úteis; 10% de desconto acima de 2 mil.", sources
    ).outcome == ("verified")


def test_numbers_not_delivered_or_with_another_meaning_are_unverified():
    assert unmatched("A taxa é R$ 150,00.", "Taxa: R$ 120,00") == [("R$ 150,00", "not_in_context")]
    assert unmatched("Desconto de 10%.", "desconto de 10 reais") == [("10%", "not_in_context")]
    assert unmatched("São 5 lojas.", "Competência: maio de 2026") == [("5 lojas", "not_in_context")]
    assert unmatched("Custa R$ 1,2 mil.", "Custa R$ 1.234,00") == [("R$ 1,2 mil", "not_in_context")]  # no rounding


def test_list_numbering_small_ordinals_and_years_of_shown_dates_are_safe():
    reply = "1. Abra a permissão.\n2. Confira a validade.\nO 1º passo vale para 2026."
    assert ground_reply(reply, ["Validade: 15/03/2026"]).outcome == "verified"
    assert unmatched("O 12º passo.", "") == [("12º", "not_in_context")]


def test_the_users_own_numbers_are_grounded_and_a_reply_without_numbers_is_verified():
    assert ground_reply("O pedido 4821 está em análise.", ["Qual o status do pedido 4821?"]).outcome == "verified"
    assert ground_reply("Está em análise.", []).outcome == "verified"
    assert SKIPPED_GROUNDING.as_json() == {"outcome": "skipped", "unmatched": []}
