"""The admin's link check, the package files and the router read names with one grammar."""

import pytest

from knowledge.package_files import PackageFileError, parse_package_text
from knowledge.routing_service import route_context
from knowledge.catalog import package_wikilinks_unresolved

from .conftest import find


@pytest.mark.parametrize(
    "link",
    ["[[NEIGHBOUR]]", "[[NEIGHBOUR|os rotores]]", "[[NEIGHBOUR#balanceamento]]", "[[ neighbour ]]"],
)
def test_a_link_the_router_follows_is_a_link_the_admin_resolves(make_package, link):
    make_package(
        "ANCHOR",
        title="Centrífuga refrigerada",
        keywords=["centrífuga"],
        body=f"Como operar a centrífuga refrigerada. Veja também {link}.",
    )
    make_package("NEIGHBOUR", title="Rotores", body="Tipos de rotor e balanceamento.")

    result = route_context(message="Como operar a centrífuga refrigerada?")

    assert "wikilink" in {n["signal"] for n in find(result, "NEIGHBOUR").why}
    assert package_wikilinks_unresolved(body=f"Veja {link}.") == []


def test_a_labelled_link_to_nowhere_is_reported_by_the_admin(make_package):
    assert package_wikilinks_unresolved(body="Veja [[NOWHERE_PACKAGE|o outro]].") == [("NOWHERE_PACKAGE", "unknown")]


def _package_text(semantic_id: str) -> str:
    return f"---\nid: SOME_PACKAGE\ntitle: T\nsummary: S\nsemantic_ids: [{semantic_id}]\n---\nBody.\n"


def test_package_files_accept_the_semantic_ids_a_front_end_sends():
    # The AgentContext schema allows a leading digit; a package must be able to name that element.
    assert parse_package_text(_package_text("2fa.settings")).data["semantic_ids"] == ["2fa.settings"]


def test_package_files_reject_what_is_not_a_semantic_id():
    with pytest.raises(PackageFileError, match="semantic_ids"):
        parse_package_text(_package_text("work permit"))
