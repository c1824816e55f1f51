"""The catalog format (catalogs/FORMAT.md): every catalog passes the generic validator, broken copies fail."""

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CATALOGS = Path(__file__).resolve().parents[3] / "knowledge" / "evaluation" / "catalogs"
VALIDATOR = CATALOGS / "validate_catalog.py"

_spec = importlib.util.spec_from_file_location("validate_catalog", VALIDATOR)
validate_catalog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(validate_catalog)

# Group prefixes chosen by the authors of catalogs written before FORMAT.md made the prefix the
# folder name; any other folder uses its own name.
PREFIXES = {
    "cityhall": "pref",
    "condominio": "condo",
    "hospital": "hosp",
    "insurance": "ins",
    "logistics": "log",
    "telecom": "tel",
    "university": "univ",
}
FOLDERS = sorted(p.name for p in CATALOGS.iterdir() if (p / "packages").is_dir())
BASE = "telecom"  # the catalog the broken copies start from


def _errors(folder, prefix=None):
    report, _ = validate_catalog.validate(folder, prefix)
    return report.errors


@pytest.mark.parametrize("name", FOLDERS)
def test_every_catalog_passes(name):
    assert _errors(CATALOGS / name, PREFIXES.get(name)) == []


def test_command_line_exit_status_zero_on_a_catalog():
    run = _run_cli(CATALOGS / BASE, "--prefix", PREFIXES[BASE])
    assert run.returncode == 0, run.stdout
    assert "OK: catalog is valid" in run.stdout


# ------------------------------------------------------------------ broken copies


def _run_cli(folder, *args):
    return subprocess.run([sys.executable, str(VALIDATOR), str(folder), *args], capture_output=True, text=True)


def _reseal(folder):
    """Rewrite SHA256SUMS so that only the deliberate breakage is left."""
    sums = folder / "SHA256SUMS"
    names = [line.split("  ", 1)[1].removeprefix("./") for line in sums.read_text().splitlines() if line.strip()]
    sums.write_text("".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names))


def _packages(folder):
    for path in sorted((folder / "packages").glob("*.md")):
        _, fm, body = path.read_text(encoding="utf-8").split("---\n", 2)
        yield path, yaml.safe_load(fm), body


def _edit_package(folder, pick, change):
    """Apply change(front_matter) to the first package for which pick(front_matter) holds."""
    path, fm, body = next((p, fm, b) for p, fm, b in _packages(folder) if pick(fm))
    change(fm)
    path.write_text(f"---\n{yaml.safe_dump(fm, allow_unicode=True, sort_keys=False)}---\n{body}", encoding="utf-8")
    _reseal(folder)
    return fm


def _edit_questions(folder, split, change):
    path = folder / f"questions.{split}.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    items = change(items)
    path.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    _reseal(folder)


@pytest.fixture
def copy(tmp_path):
    # Named after the base catalog's group prefix, so the default prefix (the folder name) fits.
    folder = tmp_path / PREFIXES[BASE]
    shutil.copytree(CATALOGS / BASE, folder)
    return folder


def _only(errors, needle):
    assert errors, "the broken copy passed"
    assert all(needle in e for e in errors), errors


def test_unbroken_copy_passes(copy):
    _reseal(copy)
    assert _errors(copy) == []


def test_two_strict_rules_fail(copy):
    _edit_package(copy, lambda fm: fm["kind"] == "rule" and not fm["strict"], lambda fm: fm.update(strict=True))
    _only(_errors(copy), "exactly one strict rule required, found 2")


def test_expected_id_not_in_packages_fails(copy):
    def rename(items):
        group = items[0]["group"]
        return [dict(it, expected=["NO_SUCH_PACKAGE"]) if it["group"] == group else it for it in items]

    _edit_questions(copy, "test", rename)
    _only(_errors(copy), "expected id NO_SUCH_PACKAGE is not a package id")


def test_group_without_spanish_fails(copy):
    def drop_spanish(items):
        group = items[0]["group"]
        return [it for it in items if not (it["group"] == group and it["lang"] == "es")]

    _edit_questions(copy, "dev", drop_spanish)
    _only(_errors(copy), "missing ['es']")


def test_english_keyword_fails(copy):
    _edit_package(copy, lambda fm: True, lambda fm: fm["keywords"].__setitem__(0, "late fee"))
    _only(_errors(copy), "keyword 'late fee' is not Portuguese")


def test_stale_checksum_fails(copy):
    with (copy / "questions.dev.json").open("a", encoding="utf-8") as f:
        f.write("\n")
    _only(_errors(copy), "checksum mismatch for questions.dev.json")


def test_foreign_words_file_extends_the_list(copy, tmp_path):
    _reseal(copy)
    keyword = next(fm for _, fm, _ in _packages(copy))["keywords"][0]
    words = tmp_path / "foreign.txt"
    words.write_text(f"# domain words\n{validate_catalog.plain_words(keyword)[0]}\n", encoding="utf-8")
    run = _run_cli(copy, "--foreign-words", str(words))
    assert run.returncode == 1
    assert f"keyword {keyword!r} is not Portuguese" in run.stdout
