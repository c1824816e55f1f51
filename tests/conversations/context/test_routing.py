"""The order of the turn's knowledge: focus → parents → wiki-link neighbours → the rest."""

from conversations.context.routing import focus_first

SEMANTIC_IDS = {
    "OVERVIEW": ["workPermit"],
    "COMPONENTS": ["workPermit.components", "workPermit.components.equipment"],
    "VALIDITY": ["workPermit.components.equipment.validity"],
    "START_DATE": ["workPermit.components.equipment.startDate"],
    "PRICING": ["quote.pricing"],
    "SAMPLING": [],
}
LINKS = {"VALIDITY": ["START_DATE"], "SAMPLING": []}
CONTEXT = {
    "focus": "workPermit.components.equipment.validity",
    "parent_ids": ["workPermit.components.equipment", "workPermit.components", "workPermit"],
    "page": "workPermit",
}


def order(ids, context=CONTEXT, **kwargs):
    return focus_first(ids, semantic_context=context, semantic_ids_of=lambda p: SEMANTIC_IDS.get(p, ()), **kwargs)


def test_the_focus_package_comes_first_then_the_nearest_parent_then_the_root():
    assert order(["OVERVIEW", "PRICING", "COMPONENTS", "VALIDITY"]) == ["VALIDITY", "COMPONENTS", "OVERVIEW", "PRICING"]


def test_wiki_link_neighbours_of_the_focus_package_follow_the_parents_in_both_directions():
    ids = ["SAMPLING", "START_DATE", "OVERVIEW", "VALIDITY"]
    outgoing = order(ids, wikilinks_of=lambda p: LINKS.get(p, ()))
    assert outgoing == ["VALIDITY", "OVERVIEW", "START_DATE", "SAMPLING"]
    incoming = order(ids, wikilinks_of=lambda p: {"START_DATE": ["VALIDITY"]}.get(p, ()))
    assert incoming == outgoing


def test_registry_links_count_as_the_semantic_id_they_hang_from():
    links = {"workPermit.components.equipment.validity": ["SAMPLING"], "workPermit": ["PRICING"]}
    assert order(["PRICING", "OVERVIEW", "SAMPLING"], registry_links=links) == ["SAMPLING", "PRICING", "OVERVIEW"]


def test_dotted_parents_count_when_none_are_declared_and_ties_keep_the_router_order():
    context = {"focus": "workPermit.components.equipment.validity", "parent_ids": [], "page": None}
    assert order(["PRICING", "SAMPLING", "OVERVIEW", "COMPONENTS"], context) == [
        "COMPONENTS",
        "OVERVIEW",
        "PRICING",
        "SAMPLING",
    ]


def test_without_a_focus_the_router_order_stands_deduplicated():
    assert order(["PRICING", "VALIDITY", "PRICING"], {"focus": None, "parent_ids": [], "page": "workPermit"}) == [
        "PRICING",
        "VALIDITY",
    ]
    assert order(["PRICING", "VALIDITY"], None) == ["PRICING", "VALIDITY"]


def test_parents_declared_root_first_still_order_the_nearest_parent_first():
    # The seed sends parentIds root first; the turn's order climbs the same chain as the router's
    # signals (common.identifiers.focus_ancestors), so the nearer parent's package comes first.
    root_first = {**CONTEXT, "parent_ids": ["workPermit", "workPermit.components"]}
    assert order(["OVERVIEW", "COMPONENTS", "VALIDITY"], context=root_first) == ["VALIDITY", "COMPONENTS", "OVERVIEW"]


def test_the_router_and_the_turn_climb_one_chain():
    from common.identifiers import focus_ancestors

    assert focus_ancestors("a.b.c", ["a", "X.y", "A.B"]) == ["a.b", "a", "X.y"]
    assert focus_ancestors(None, ["p"]) == ["p"]
    assert focus_ancestors("a", ["A", "b"]) == ["b"]
