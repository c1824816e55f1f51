from knowledge.catalog import Catalog, PackageEntry, get_active_catalog

SEED_IDS = [
    "CLICKSIGN_PROCESS", "COMPANY_INFO", "CUSTOM_DEVELOPMENT", "DELIVERY_TIMELINES", "GENOME_SIZES",
    "GOGENETIC_YOU", "GOSOLOS_PLATFORM", "GOSOLOS_SAMPLING", "KITS_BS_DIAGNOSTICA", "PORTFOLIO_EXCLUSIONS",
    "PORTFOLIO_OVERVIEW", "PRICING_RULES", "PRIMERS_SANGER", "SAMPLE_INSTRUCTIONS", "TARGETS_QPCR",
]  # fmt: skip


def test_bundled_catalog_has_the_seed_ids_in_order_with_content(catalog):
    assert catalog.ids == SEED_IDS
    for entry in catalog.entries:
        assert entry.body.strip() and entry.title and entry.summary
        assert entry.revision == 1


def test_seed_aliases_resolve(catalog):
    for alias, target in {
        "PRECOS": "PRICING_RULES",
        "ALVOS_QPCR": "TARGETS_QPCR",
        "GOYOU": "GOGENETIC_YOU",
        "COLETA_SOLO": "GOSOLOS_SAMPLING",
    }.items():
        assert catalog.resolve(alias).package_id == target


def test_render_package_catalog_lists_every_package_in_order(catalog):
    lines = get_active_catalog().render().splitlines()
    assert len(lines) == 15
    assert lines[0].startswith("- ::CLICKSIGN_PROCESS — ")  # a procedure is offered by name
    assert lines[11].startswith("- PRICING_RULES — ")


def _entry(package_id: str, *aliases: str) -> PackageEntry:
    return PackageEntry(package_id, package_id.title(), "", "knowledge", False, aliases, (), (), "", "Body.", 1)


def resolve_package_id(requested, ids, aliases):
    """What the catalog resolves among `ids` (with `aliases`: alias -> ID), as an ID."""
    entries = [_entry(pid, *(alias for alias, target in aliases.items() if target == pid)) for pid in ids]
    entry = Catalog.build(version=1, entries=entries).resolve(requested)
    return entry.package_id if entry else None


def test_resolve_package_id_normalizes_accents_case_and_separators():
    ids = ["PRICING_RULES", "TARGETS_QPCR"]
    aliases = {"PRECOS": "PRICING_RULES", "ALVOS_QPCR": "TARGETS_QPCR"}
    assert resolve_package_id("pricing rules", ids, aliases) == "PRICING_RULES"
    assert resolve_package_id("Pricing-Rules", ids, aliases) == "PRICING_RULES"
    assert resolve_package_id("pricing.rules", ids, aliases) == "PRICING_RULES"
    assert resolve_package_id("preços", ids, aliases) == "PRICING_RULES"
    assert resolve_package_id("Alvos qPCR", ids, aliases) == "TARGETS_QPCR"
    assert resolve_package_id("::PRICING_RULES", ids, aliases) == "PRICING_RULES"
    assert resolve_package_id("UNKNOWN", ids, aliases) is None
    assert resolve_package_id("", ids, aliases) is None
    assert resolve_package_id(None, ids, aliases) is None
    assert resolve_package_id(42, ids, aliases) is None


def test_alias_to_an_unavailable_package_does_not_resolve():
    assert resolve_package_id("PRECOS", ["TARGETS_QPCR"], {"PRECOS": "PRICING_RULES"}) is None
