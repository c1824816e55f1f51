from common.identifiers import (
    is_semantic_id,
    normalize_package_key,
    requested_package_key,
    semantic_id_parents,
    wikilink_targets,
)


def test_wiki_link_targets_with_labels_sections_and_spaces_in_first_order():
    body = "See [[A_B]], [[C|the c]], [[ D#part ]], [[Pricing rules]] and [[A_B|again]]. Not [[]] nor [single]."
    assert wikilink_targets(body) == ["A_B", "C", "D", "Pricing rules"]


def test_package_keys_fold_accents_case_and_separators_keeping_underscores():
    assert normalize_package_key(" Preços de-kit.v2 ") == "PRECOS_DE_KIT_V2"
    assert normalize_package_key("PRICING__RULES") == "PRICING_RULES"
    assert requested_package_key("::pricing rules") == "PRICING_RULES"
    assert requested_package_key(None) == ""


def test_semantic_ids_are_dotted_segments_that_may_start_with_a_digit():
    assert is_semantic_id("workPermit.components.validity")
    assert is_semantic_id("2fa.settings")
    assert is_semantic_id("work-permit.components")
    assert not is_semantic_id("workPermit..validity")
    assert not is_semantic_id(".validity")
    assert not is_semantic_id("a" * 201)
    assert not is_semantic_id(42)
    assert semantic_id_parents("a.b.c") == ["a.b", "a"]
