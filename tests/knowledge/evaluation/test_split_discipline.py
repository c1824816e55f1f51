"""Held-out evaluation: dev is tuned on, test is only reported — no test question reaches a tuning input."""

import json
import re
import unicodedata
from pathlib import Path

import pytest

from knowledge.evaluation.tune import CATALOGS, ROOT, TUNING_INPUTS, tuning_questions

HELD_OUT = (
    "saas",
    "hr",
    "hospital",
    "university",
    "logistics",
    "cityhall",
    "insurance",
    "telecom",
    "vet",
    "energia",
    "condominio",
    "biblioteca",
    "transporte",
    "aereo",
    "mercado",
)
NAMES = ("sample", *HELD_OUT)


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(re.findall(r"\w+", text))


def _questions(name: str, split: str) -> list[dict]:
    return json.loads((CATALOGS / name / f"questions.{split}.json").read_text(encoding="utf-8"))


def _tuning_files() -> list[Path]:
    """Everything tuning reads that this project writes: dev files, its own catalogs' packages, the router's code,
    the proposals a stand-in model wrote.

    The held-out catalogs' packages are the independent authors' (a direct question may
    quote their text); they are checked unmodified against their checksums instead.
    """
    files: list[Path] = sorted((ROOT / "knowledge" / "catalog").glob("*.md"))
    files.extend(sorted((ROOT / "knowledge" / "catalog_demo").glob("*.md")))
    files.extend(sorted((ROOT / "knowledge" / "retrieval").glob("*.py")))
    files.append(ROOT / "knowledge" / "evaluation" / "tune.py")
    # The stand-in model's proposals (written from the articles alone) are blended into the vectors
    # tuning measures: a test question in one would be measured against itself.
    files.extend(sorted(CATALOGS.glob("*/example_questions.proposed.json")))
    files.extend(sorted(CATALOGS.glob("*/search_terms.proposed.json")))
    # The stand-in model's out-of-scope questions: a test question among them would be set against itself.
    files.extend(sorted(CATALOGS.glob("*/out_of_scope.proposed.json")))
    return files


@pytest.mark.parametrize("name", HELD_OUT)
def test_held_out_catalogs_are_as_their_authors_wrote_them(name):
    # No keyword or body was edited to fit a question (SHA256SUMS taken from the authors' copy).
    import hashlib

    folder = CATALOGS / name
    lines = (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 32
    for line in lines:
        digest, relative = line.split(maxsplit=1)
        assert hashlib.sha256((folder / relative).read_bytes()).hexdigest() == digest, relative
    # sha256sum writes paths as given: "packages/x.md" or "./packages/x.md".
    listed = {line.split(maxsplit=1)[1].removeprefix("./") for line in lines}
    assert {f"packages/{p.name}" for p in (folder / "packages").glob("*.md")} <= listed


def test_tuning_reads_dev_splits_only():
    for name, (_, questions) in TUNING_INPUTS.items():
        assert questions.name == "questions.dev.json", name
    assert set(TUNING_INPUTS) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_dev_and_test_are_disjoint_and_keep_each_group_whole(name):
    dev, test = _questions(name, "dev"), _questions(name, "test")
    assert dev and test
    dev_groups = {q["group"] for q in dev}
    test_groups = {q["group"] for q in test}
    assert not dev_groups & test_groups
    assert not {_norm(q["query"]) for q in dev} & {_norm(q["query"]) for q in test}


def _leaks(name: str, path: Path) -> int:
    test_questions = {_norm(q["query"]) for q in _questions(name, "test")}
    test_questions = {q for q in test_questions if len(q.split()) >= 3}  # "PRICING_RULES" alone is no leak
    text = _norm(path.read_text(encoding="utf-8"))
    return sum(q in text for q in test_questions)


@pytest.mark.parametrize("name", NAMES)
def test_no_test_question_appears_in_any_tuning_input(name):
    # Read, never printed: a failure names the file, not the question.
    for path in _tuning_files():
        leaked = _leaks(name, path)
        assert leaked == 0, f"{leaked} test-split question(s) of {name} found in {path.relative_to(ROOT)}"


@pytest.mark.parametrize("tuned", NAMES)
def test_the_questions_tuning_uses_hold_no_test_question_of_any_catalog(tuned):
    used = {_norm(q["query"]) for q in tuning_questions(tuned)}
    assert len(used) >= 40
    for name in NAMES:
        assert not used & {_norm(q["query"]) for q in _questions(name, "test")}, (tuned, name)
    # Everything else of the dev split is used.
    dev = _questions(tuned, "dev")
    assert len(tuning_questions(tuned)) >= len(dev) - 6


def test_the_leak_check_finds_a_test_question_pasted_into_keywords(tmp_path):
    question = _questions("hr", "test")[0]["query"]
    leaky = tmp_path / "01_leaky.md"
    leaky.write_text(f"---\nkeywords: [{question.upper()}]\n---\nbody", encoding="utf-8")
    assert _leaks("hr", leaky) == 1
