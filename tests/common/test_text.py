from common.text import analyze, analyze_identifier, fold, query_key, stem
from knowledge.retrieval.typos import TypoExpander


def test_lower_case_stop_words_and_stemming_across_languages():
    assert analyze("Qual o prazo do Sanger?") == ["praz", "sang"]
    assert analyze("What is the deadline?") == ["deadlin"]
    assert analyze("¿Cuál es el plazo?") == ["plaz"]
    # Inflections of each language meet on one stem.
    assert stem("kits") == stem("kit")
    assert stem("preços") == stem("preço")
    assert stem("sending") == stem("send")


def test_stemming_happens_before_accent_folding():
    # The Portuguese stemmer needs the ç/ã to find "-ação"; folding first would leave "informaca".
    assert analyze("informação") == ["inform"]
    assert analyze("INFORMAÇÕES") == ["inform"]
    assert fold("ção") == "cao"


def test_identifiers_and_codes_stay_whole():
    assert analyze("PRICING_RULES e PT-2026-004821") == ["pricing_rules", "pt-2026-004821"]
    assert analyze("em workPermit.components") == ["workpermit.components"]
    # A hyphenated word is not a code: its parts are words.
    assert analyze("guarda-chuva") == ["guard", "chuv"]


def test_identifier_field_indexes_the_whole_code_and_its_words():
    terms = analyze_identifier("DELIVERY_TIMELINES")
    assert terms[0] == "delivery_timelines"
    assert set(terms[1:]) == {stem("delivery"), stem("timelines")}


def test_query_key_ignores_order_case_duplicates_and_stop_words():
    assert query_key("Prazo do SANGER?") == query_key("sanger, qual o prazo prazo")


def test_typo_expansion_finds_terms_one_edit_away():
    vocab = {"sequenc": 3, "praz": 5, "clicksign": 1, "sang": 2}
    typos = TypoExpander(vocab)
    assert typos.expand("clicsign") == ["clicksign"]  # deletion
    assert typos.expand("prqzx") == []  # two edits away
    assert typos.expand("prasz") == ["praz"]  # insertion
    assert typos.expand("sxqxenc") == []
    assert typos.expand("seqeunc") == ["sequenc"]  # transposition
    assert typos.expand("praz") == []  # known terms are left alone
    assert typos.expand("abc") == []  # too short to correct safely
