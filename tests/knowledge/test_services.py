"""Catalog writes: override semantics, revisions, revert, aliases, import/export and the commands."""

import json
import os
import shutil
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from knowledge.catalog import get_active_catalog
from knowledge.exceptions import InvalidPackageOperationError, PackageImportError, RevisionNotFoundError
from knowledge.models import Package, PackageOrigin, PackageRevision
from knowledge.package_files import parse_package_text, render_package_file
from knowledge.selectors import catalog_version_get
from knowledge.services import (
    catalog_sync_bundled,
    package_create,
    package_reset_to_bundled,
    package_revert,
    package_set_active,
    package_update,
    packages_export,
    packages_import,
)

BUNDLED_DIR = Path(settings.BASE_DIR) / "knowledge" / "catalog"


def _pkg(package_id: str) -> Package:
    return Package.objects.get(package_id=package_id)


def _edit(package_id: str, acting_user=None, note: str = "edit", **changes) -> Package:
    package = _pkg(package_id)
    return package_update(acting_user=acting_user, package=package, data={**package.content(), **changes}, note=note)


def _content(**changes) -> dict:
    return {
        "title": "Feriados",
        "summary": "Dias sem atendimento",
        "kind": "knowledge",
        "strict": False,
        "aliases": [],
        "keywords": [],
        "semantic_ids": [],
        "source": "",
        "body": "O laboratório fecha nos feriados.",
        **changes,
    }


@pytest.fixture
def bundled_dir(tmp_path, catalog) -> Path:
    """A writable copy of the bundled catalog, already loaded."""
    folder = tmp_path / "bundled"
    shutil.copytree(BUNDLED_DIR, folder)
    assert catalog_sync_bundled(directories=[folder]).as_line() == "0 created, 0 updated, 15 unchanged, 0 deactivated"
    return folder


def _rewrite_bundled(folder: Path, package_id: str, **changes) -> None:
    path = next(p for p in folder.glob("*.md") if parse_package_text(p.read_text(), str(p)).package_id == package_id)
    parsed = parse_package_text(path.read_text(), str(path))
    path.write_text(render_package_file(package_id, {**parsed.data, **changes}))


# --- override semantics --------------------------------------------------------------------


def test_an_active_override_replaces_the_bundled_body(catalog):
    bundled_body = catalog.get("PRICING_RULES").body
    _edit("PRICING_RULES", body="Tabela nova da curadoria.")
    entry = get_active_catalog().get("PRICING_RULES")
    assert entry.body == "Tabela nova da curadoria." and entry.body != bundled_body
    package = _pkg("PRICING_RULES")
    assert package.is_overridden and package.bundled_content["body"] == bundled_body


def test_an_inactive_package_is_hidden_by_id_and_alias(catalog, api_client):
    package_set_active(acting_user=None, package=_pkg("PRICING_RULES"), active=False)
    current = get_active_catalog()
    assert current.get("PRICING_RULES") is None and current.resolve("preços") is None
    assert "PRICING_RULES" not in current.render()
    assert len(current) == 14
    assert api_client.get("/api/v1/packages/PRICING_RULES").status_code == 404
    assert api_client.get("/api/v1/packages/PRECOS").status_code == 404
    assert _pkg("PRICING_RULES").is_overridden


def test_reset_falls_back_to_the_bundled_file(catalog):
    bundled = _pkg("PRICING_RULES").content()
    _edit("PRICING_RULES", body="Override.")
    package_set_active(acting_user=None, package=_pkg("PRICING_RULES"), active=False)
    package = package_reset_to_bundled(acting_user=None, package=_pkg("PRICING_RULES"))
    assert package.content() == bundled
    assert package.is_active and not package.is_overridden
    assert package.revisions.first().action == PackageRevision.Action.RESET
    assert get_active_catalog().get("PRICING_RULES").body == bundled["body"]


def test_reset_refuses_a_package_created_in_the_admin(catalog):
    package = package_create(acting_user=None, package_id="LAB_HOLIDAYS", data=_content())
    with pytest.raises(InvalidPackageOperationError, match="Only bundled packages can be reset"):
        package_reset_to_bundled(acting_user=None, package=package)


def test_editing_an_inactive_bundled_package_keeps_it_hidden_and_overridden(bundled_dir):
    bundled = _pkg("GENOME_SIZES").content()
    package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=False)
    # Even an edit that equals the file keeps the deactivation (the override) in place.
    _edit("GENOME_SIZES", body="Rascunho.")
    package = _edit("GENOME_SIZES", body=bundled["body"])
    assert not package.is_active and package.is_overridden
    catalog_sync_bundled(directories=[bundled_dir])
    package.refresh_from_db()
    assert not package.is_active and package.is_overridden
    assert get_active_catalog().get("GENOME_SIZES") is None

    _edit("GENOME_SIZES", body="Versão revisada.")
    package = package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=True)
    assert package.is_overridden
    assert get_active_catalog().get("GENOME_SIZES").body == "Versão revisada."


def test_a_bundled_file_edited_on_disk_reaches_packages_without_override(bundled_dir):
    _edit("PRICING_RULES", body="Override da curadoria.")
    _rewrite_bundled(bundled_dir, "COMPANY_INFO", body="Empresa: novo texto do arquivo.")
    _rewrite_bundled(bundled_dir, "PRICING_RULES", body="Preços: novo texto do arquivo.")
    version = catalog_version_get()

    summary = catalog_sync_bundled(directories=[bundled_dir])

    assert summary.updated == ["COMPANY_INFO", "PRICING_RULES"]
    assert catalog_version_get() > version
    current = get_active_catalog()
    assert current.get("COMPANY_INFO").body == "Empresa: novo texto do arquivo."
    assert current.get("PRICING_RULES").body == "Override da curadoria."  # the override stands
    assert _pkg("PRICING_RULES").bundled_content["body"] == "Preços: novo texto do arquivo."
    assert _pkg("COMPANY_INFO").revisions.first().action == PackageRevision.Action.BUNDLED_SYNC
    # ...and resetting the override now brings the new file content.
    package_reset_to_bundled(acting_user=None, package=_pkg("PRICING_RULES"))
    assert get_active_catalog().get("PRICING_RULES").body == "Preços: novo texto do arquivo."


def test_an_unchanged_sync_writes_nothing(bundled_dir):
    version = catalog_version_get()
    revisions = PackageRevision.objects.count()
    summary = catalog_sync_bundled(directories=[bundled_dir])
    assert len(summary.unchanged) == 15 and not (summary.created or summary.updated or summary.deactivated)
    assert catalog_version_get() == version and PackageRevision.objects.count() == revisions


def test_a_removed_file_hides_its_package_and_a_restored_one_brings_it_back(bundled_dir, tmp_path):
    removed = next(bundled_dir.glob("05_*.md"))
    kept = tmp_path / removed.name
    shutil.move(removed, kept)
    (bundled_dir / "13_primers_sanger.md").rename(tmp_path / "13_primers_sanger.md")
    _edit("PRIMERS_SANGER", body="Override ativo.")  # an active override stands on its own

    summary = catalog_sync_bundled(directories=[bundled_dir])

    assert summary.deactivated == ["GENOME_SIZES"]
    current = get_active_catalog()
    assert current.get("GENOME_SIZES") is None
    assert current.get("PRIMERS_SANGER").body == "Override ativo."

    with pytest.raises(InvalidPackageOperationError, match="bundled file of this package was removed"):
        package_reset_to_bundled(acting_user=None, package=_pkg("GENOME_SIZES"))
    # A curator who activates it anyway keeps it, as an override of the missing file.
    package = package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=True)
    assert package.is_overridden
    assert catalog_sync_bundled(directories=[bundled_dir]).deactivated == []
    assert get_active_catalog().get("GENOME_SIZES") is not None
    package_reset_to_bundled(acting_user=None, package=package)  # drop the override...
    assert catalog_sync_bundled(directories=[bundled_dir]).deactivated == ["GENOME_SIZES"]  # ...hidden again

    shutil.move(kept, removed)
    summary = catalog_sync_bundled(directories=[bundled_dir])
    assert "GENOME_SIZES" in summary.updated
    assert get_active_catalog().get("GENOME_SIZES") is not None


def test_a_new_bundled_file_does_not_overwrite_a_curators_package_with_its_id(bundled_dir):
    package_create(acting_user=None, package_id="LAB_HOLIDAYS", data=_content(body="Texto da curadoria."))
    (bundled_dir / "16_lab_holidays.md").write_text(
        render_package_file("LAB_HOLIDAYS", _content(body="Texto do arquivo."))
    )
    catalog_sync_bundled(directories=[bundled_dir])
    package = _pkg("LAB_HOLIDAYS")
    assert package.origin == PackageOrigin.BUNDLED and package.is_overridden
    assert package.body == "Texto da curadoria."
    package_reset_to_bundled(acting_user=None, package=package)
    assert _pkg("LAB_HOLIDAYS").body == "Texto do arquivo."


# --- revisions -------------------------------------------------------------------------------


def test_every_service_save_is_one_revision_with_author_note_and_hash(catalog, curator):
    package = package_create(acting_user=curator, package_id="LAB_HOLIDAYS", data=_content(), note="new")
    _edit("LAB_HOLIDAYS", acting_user=curator, note="longer", body="O laboratório fecha nos feriados nacionais.")
    package_set_active(acting_user=curator, package=package, active=False, note="off")
    revisions = list(_pkg("LAB_HOLIDAYS").revisions.order_by("number"))
    assert [(r.number, r.action, r.note, r.author) for r in revisions] == [
        (1, "created", "new", curator),
        (2, "edited", "longer", curator),
        (3, "deactivated", "off", curator),
    ]
    assert revisions[1].data["body"] == "O laboratório fecha nos feriados nacionais."
    assert revisions[2].data["is_active"] is False
    assert revisions[0].content_hash != revisions[1].content_hash
    assert revisions[1].content_hash == revisions[2].content_hash  # the hash is of the content, not the state
    assert _pkg("LAB_HOLIDAYS").content_hash == revisions[2].content_hash
    with pytest.raises(ValueError, match="immutable"):
        revisions[0].save()


def test_a_no_op_writes_no_revision_and_keeps_the_version(catalog):
    package = _pkg("PRICING_RULES")
    version = catalog_version_get()
    package_update(acting_user=None, package=package, data=package.content(), note="nothing")
    package_update(acting_user=None, package=package, data={**package.content(), "body": package.body + "\n\n"})
    package_set_active(acting_user=None, package=package, active=True)
    package_reset_to_bundled(acting_user=None, package=package)
    assert _pkg("PRICING_RULES").revision_number == 1
    assert catalog_version_get() == version


def test_every_change_bumps_the_catalog_version_seen_by_the_next_call(catalog):
    assert get_active_catalog().version == catalog.version
    _edit("PRICING_RULES", body="Nova.")
    fresh = get_active_catalog()
    assert fresh.version == catalog.version + 1
    assert fresh.get("PRICING_RULES").body == "Nova." and fresh.get("PRICING_RULES").revision == 2


def test_revert_restores_old_content_as_a_new_revision(catalog, curator):
    original = _pkg("PRICING_RULES").content()
    _edit("PRICING_RULES", title="Preços", body="Errado.")
    _edit("PRICING_RULES", body="Mais errado.")
    package = package_revert(acting_user=curator, package=_pkg("PRICING_RULES"), number=1)
    assert package.revision_number == 4 and package.content() == original
    latest = package.revisions.first()
    assert (latest.action, latest.note, latest.author) == ("reverted", "Reverted to revision 1", curator)
    assert not package.is_overridden
    assert list(package.revisions.values_list("number", flat=True)) == [4, 3, 2, 1]  # history kept
    package = package_revert(acting_user=None, package=package, number=3)
    assert package.body == "Mais errado." and package.is_overridden


def test_revert_to_a_missing_revision_is_a_not_found_error(catalog):
    with pytest.raises(RevisionNotFoundError):
        package_revert(acting_user=None, package=_pkg("PRICING_RULES"), number=9)


# --- aliases --------------------------------------------------------------------------------


def test_aliases_are_normalized_and_deduplicated_at_save(catalog):
    package = _edit("COMPANY_INFO", aliases=["Sobre a Empresa", "sobre-a-empresa", "Quem.Somos", "company info"])
    assert package.aliases == ["SOBRE_A_EMPRESA", "QUEM_SOMOS"]  # own ID dropped, duplicates folded
    assert get_active_catalog().resolve("quem somos").package_id == "COMPANY_INFO"


@pytest.mark.parametrize(
    ("aliases", "message"),
    [
        (["preços"], "Alias 'PRECOS' already names package PRICING_RULES."),
        (["Pricing rules"], "Alias 'PRICING_RULES' already names package PRICING_RULES."),
        (["!!!"], "'!!!' is not a valid alias (letters, digits, underscores)."),
    ],
)
def test_an_alias_that_would_name_two_packages_is_refused_at_save(catalog, aliases, message):
    with pytest.raises(ValidationError) as exc:
        _edit("COMPANY_INFO", aliases=aliases)
    assert exc.value.message_dict == {"aliases": [message]}
    assert _pkg("COMPANY_INFO").revision_number == 1


def test_an_alias_of_an_inactive_package_is_still_taken(catalog):
    package_set_active(acting_user=None, package=_pkg("PRICING_RULES"), active=False)
    with pytest.raises(ValidationError, match="already names package PRICING_RULES"):
        package_create(acting_user=None, package_id="LAB_HOLIDAYS", data=_content(aliases=["PRECOS"]))


def test_a_new_package_id_that_is_an_alias_is_refused(catalog):
    with pytest.raises(ValidationError) as exc:
        package_create(acting_user=None, package_id="GOYOU", data=_content())
    assert exc.value.message_dict == {"package_id": ["'GOYOU' is already an alias of GOGENETIC_YOU."]}
    assert not Package.objects.filter(package_id="GOYOU").exists()


# --- import and export -------------------------------------------------------------------------


def _write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")


GOOD = "---\nid: LAB_HOLIDAYS\ntitle: Feriados\nsummary: Dias sem atendimento\naliases: [feriados]\n---\nFechado.\n"
BAD = "---\nid: LAB_HOURS\nsummary: Horário de atendimento\n---\nDas 8h às 17h.\n"


def test_one_bad_file_imports_nothing_and_names_file_and_field(catalog, tmp_path):
    folder = tmp_path / "import"
    _write(folder, "01_good.md", GOOD)
    _write(folder, "02_bad.md", BAD)
    version = catalog_version_get()
    with pytest.raises(PackageImportError) as exc:
        packages_import(acting_user=None, directory=folder)
    assert exc.value.errors == [f"{folder / '02_bad.md'}: title: required, a non-empty string"]
    assert not Package.objects.filter(package_id__in=["LAB_HOLIDAYS", "LAB_HOURS"]).exists()
    assert catalog_version_get() == version

    out = StringIO()
    with pytest.raises(CommandError) as cmd_exc:
        call_command("import_packages", str(folder), stdout=out)
    assert str(cmd_exc.value) == f"Nothing imported:\n  {folder / '02_bad.md'}: title: required, a non-empty string"
    assert not Package.objects.filter(package_id="LAB_HOLIDAYS").exists()


def test_import_refuses_an_alias_taken_by_another_package(catalog, tmp_path):
    folder = tmp_path / "import"
    _write(folder, "01.md", GOOD.replace("[feriados]", "[feriados, preços]"))
    with pytest.raises(PackageImportError) as exc:
        packages_import(acting_user=None, directory=folder)
    assert exc.value.errors == [f"{folder / '01.md'}: aliases: Alias 'PRECOS' already names package PRICING_RULES."]


def test_an_import_refused_while_writing_leaves_nothing_and_names_the_file(catalog, tmp_path):
    # Moving an alias between two packages passes the set check but meets the old owner
    # row on write; the whole import is refused, not half applied.
    folder = tmp_path / "export"
    packages_export(directory=folder)
    company = next(folder.glob("*_company_info.md"))
    pricing = next(folder.glob("*_pricing_rules.md"))
    for path, change in ((company, lambda a: ["PRECOS", *a]), (pricing, lambda a: [x for x in a if x != "PRECOS"])):
        parsed = parse_package_text(path.read_text(), str(path))
        path.write_text(
            render_package_file(parsed.package_id, {**parsed.data, "aliases": change(parsed.data["aliases"])})
        )
    with pytest.raises(PackageImportError) as exc:
        packages_import(acting_user=None, directory=folder)
    assert exc.value.errors == [f"{company}: aliases: Alias 'PRECOS' already names package PRICING_RULES."]
    assert _pkg("COMPANY_INFO").revision_number == 1 and _pkg("PRICING_RULES").revision_number == 1


def test_dry_run_reports_and_writes_nothing(catalog, tmp_path):
    folder = tmp_path / "import"
    _write(folder, "01.md", GOOD)
    _write(
        folder, "02.md", render_package_file("PRICING_RULES", {**_pkg("PRICING_RULES").content(), "title": "Preços"})
    )
    revisions, version = PackageRevision.objects.count(), catalog_version_get()
    out = StringIO()
    call_command("import_packages", str(folder), "--dry-run", stdout=out)
    assert out.getvalue() == (
        "Dry run, nothing written: 1 created, 1 updated, 0 unchanged, 0 deactivated.\n"
        "  created: LAB_HOLIDAYS\n"
        "  updated: PRICING_RULES\n"
    )
    assert PackageRevision.objects.count() == revisions and catalog_version_get() == version
    assert not Package.objects.filter(package_id="LAB_HOLIDAYS").exists()


def test_import_writes_one_revision_per_changed_package(catalog, tmp_path, curator):
    folder = tmp_path / "import"
    _write(folder, "01.md", GOOD)
    _write(
        folder, "02.md", render_package_file("PRICING_RULES", {**_pkg("PRICING_RULES").content(), "title": "Preços"})
    )
    _write(folder, "03.md", render_package_file("COMPANY_INFO", _pkg("COMPANY_INFO").content()))
    out = StringIO()
    call_command("import_packages", str(folder), "--note", "Quarterly review", stdout=out)
    assert out.getvalue().splitlines()[0] == "Imported: 1 created, 1 updated, 1 unchanged, 0 deactivated."
    created, updated = _pkg("LAB_HOLIDAYS"), _pkg("PRICING_RULES")
    assert (created.revision_number, created.aliases, created.origin) == (1, ["FERIADOS"], PackageOrigin.ADMIN)
    assert updated.revision_number == 2 and updated.is_overridden
    assert updated.revisions.first().action == "imported" and updated.revisions.first().note == "Quarterly review"
    assert _pkg("COMPANY_INFO").revision_number == 1


def test_export_then_import_over_the_same_catalog_is_all_unchanged(catalog, tmp_path, curator):
    package_create(acting_user=curator, package_id="LAB_HOLIDAYS", data=_content(keywords=["feriado, recesso", "ação"]))
    _edit("PRICING_RULES", body='Tabela: | a | b |\n\n---\n\nCom `código` e "aspas": sim.')
    folder = tmp_path / "export"
    out = StringIO()
    call_command("export_packages", str(folder), stdout=out)
    assert out.getvalue() == f"Exported 16 packages to {folder}.\n"
    revisions = PackageRevision.objects.count()

    summary = packages_import(acting_user=None, directory=folder)

    assert len(summary.unchanged) == 16 and not (summary.created or summary.updated)
    assert PackageRevision.objects.count() == revisions
    again = tmp_path / "again"
    packages_export(directory=again)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {p.name: p.read_bytes() for p in again.iterdir()}


def test_export_then_import_into_an_empty_catalog_restores_identical_content(catalog, tmp_path):
    _edit("PRICING_RULES", body="Override exportado.")
    package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=False)
    before = {p.package_id: p.content() for p in Package.objects.filter(is_active=True)}
    folder = tmp_path / "export"
    assert len(packages_export(directory=folder)) == 14  # inactive packages stay out by default
    Package.objects.all().delete()

    summary = packages_import(acting_user=None, directory=folder)

    assert sorted(summary.created) == sorted(before)
    assert {p.package_id: p.content() for p in Package.objects.all()} == before
    assert get_active_catalog().ids == list(before)  # catalog order survives


def test_export_into_a_folder_with_package_files_is_refused_unless_replaced(catalog, tmp_path, curator):
    folder = tmp_path / "export"
    call_command("export_packages", str(folder), stdout=StringIO())
    # A package earlier in the order shifts every file name: the old files would import twice.
    package_create(acting_user=curator, package_id="LAB_HOLIDAYS", data=_content())
    Package.objects.filter(package_id="LAB_HOLIDAYS").update(position=0)
    (folder / "notes.txt").write_text("kept")

    with pytest.raises(CommandError, match=r"already holds 15 package files.*--replace"):
        call_command("export_packages", str(folder), stdout=StringIO())
    assert len(list(folder.glob("*.md"))) == 15

    call_command("export_packages", str(folder), "--replace", stdout=StringIO())

    assert len(list(folder.glob("*.md"))) == 16 and (folder / "notes.txt").read_text() == "kept"
    summary = packages_import(acting_user=None, directory=folder, dry_run=True)
    assert len(summary.unchanged) == 16


def test_export_can_include_inactive_packages(catalog, tmp_path):
    package_set_active(acting_user=None, package=_pkg("GENOME_SIZES"), active=False)
    assert len(packages_export(directory=tmp_path / "all", include_inactive=True)) == 15


def test_import_command_rejects_a_missing_folder(tmp_path, db):
    with pytest.raises(CommandError, match="not a folder"):
        call_command("import_packages", str(tmp_path / "nope"))


def test_load_catalog_command_prints_its_summary(db):
    out = StringIO()
    call_command("load_catalog", stdout=out)
    assert out.getvalue() == "Bundled catalog: 15 created, 0 updated, 0 unchanged, 0 deactivated.\n"
    out = StringIO()
    call_command("load_catalog", stdout=out)
    assert out.getvalue() == "Bundled catalog: 0 created, 0 updated, 15 unchanged, 0 deactivated.\n"


def test_windows_line_endings_do_not_change_the_body():
    text = "---\nid: LAB_HOLIDAYS\ntitle: T\nsummary: S\n---\nLinha 1\n\nLinha 2\n"
    assert parse_package_text(text.replace("\n", "\r\n")).data == parse_package_text(text).data


@pytest.mark.parametrize(
    ("value", "expected"),
    [("none", []), ("/srv/catalog,/srv/extra", ["/srv/catalog", "/srv/extra"])],
)
def test_knowledge_catalog_dir_names_a_team_folder_or_none(value, expected):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused",  # not embedded: no var/ secret written
        "SECRET_KEY": "settings-test",
        "KNOWLEDGE_CATALOG_DIR": value,
    }
    code = "import json; from django.conf import settings; print(json.dumps([str(p) for p in settings.KNOWLEDGE_CATALOG_DIRS]))"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == expected
