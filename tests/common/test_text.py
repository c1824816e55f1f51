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


def test_content_words_split_codes_drop_stop_words_and_use_portuguese_stems():
    from common.text import content_words

    assert content_words("Explique a aba Componentes da PT-2026-004821 (WORK_PERMIT)") == [
        "aba",
        "component",
        "pt",
        "2026",
        "004821",
        "work",
        "permit",
    ]
    # Portuguese stems: "sending" stays a whole word (the index's shortest stem would give "send").
    assert content_words("sending preços") == ["sending", "prec"]


def test_one_language_rule_for_every_caller():
    from common.text import guess_language

    assert guess_language({"pt": 0, "en": 2, "es": 1}) == "en"
    assert guess_language({"pt": 1, "en": 1, "es": 0}) == "pt"  # a tie goes to the default
    assert guess_language({"pt": 0, "en": 1, "es": 1}) == "en"  # ...or to the first leader
    assert guess_language({"pt": 0, "en": 1, "es": 1}, hint="es-MX") == "es"  # the locale breaks a tie
    assert guess_language({}, hint="en") == "en"
    assert guess_language({}, default="es") == "es"


def test_stemming_many_words_at_once_gives_each_words_own_stem(monkeypatch):
    from common.text import analysis

    words = ["preços", "sending", "extracción", "kits", "ações", "corriendo", "amostras", "análises", "be", "ções"]
    one_by_one = {}
    for word in words:
        monkeypatch.setattr(analysis, "_STEM_CACHE", {})
        one_by_one[word] = analysis.stem(word)
    monkeypatch.setattr(analysis, "_STEM_CACHE", {})
    analysis.stem_many(words + words)
    assert analysis._STEM_CACHE == one_by_one
    # Bounded like the per-word cache: past the cap, words are stemmed when asked and not kept.
    monkeypatch.setattr(analysis, "_STEM_CACHE", {})
    monkeypatch.setattr(analysis, "_STEM_CACHE_MAX", 3)
    analysis.stem_many(words)
    assert list(analysis._STEM_CACHE) == words[:3]
    assert analysis.stem("corriendo") == one_by_one["corriendo"] and len(analysis._STEM_CACHE) == 3
