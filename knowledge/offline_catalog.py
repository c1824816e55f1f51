"""A folder of package files as an in-memory router index, without the database.

For measuring a catalog before (or without) importing it: `evaluate_retrieval
--catalog DIR` and the tuning script read packages this way, so nothing is
written to the database catalog and nothing it holds is read.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from knowledge.package_files import package_files_in, parse_package_file
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.dense import (
    MAX_OUT_OF_SCOPE_TOTAL,
    DenseIndex,
    EmbeddingCache,
    clean_questions,
    folder_dense_index,
)


def load_package_folder(directory: str | Path) -> list[Entry]:
    """Every package file of a folder (or its packages/ subfolder), parsed and validated, in file order."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"{directory} is not a folder")
    files = package_files_in(root)
    if not files and (root / "packages").is_dir():
        files = package_files_in(root / "packages")
    if not files:
        raise ValueError(f"{directory} holds no package files (*.md)")
    entries: list[Entry] = []
    seen: set[str] = set()
    for path in files:
        parsed = parse_package_file(path)
        if parsed.package_id in seen:
            raise ValueError(f"{path}: id: {parsed.package_id} appears twice")
        seen.add(parsed.package_id)
        d = parsed.data
        entries.append(
            Entry(
                package_id=parsed.package_id,
                title=d["title"],
                summary=d["summary"],
                kind=d["kind"],
                strict=d["strict"],
                aliases=tuple(d["aliases"]),
                keywords=tuple(d["keywords"]),
                semantic_ids=tuple(d["semantic_ids"]),
                body=d["body"],
            )
        )
    return entries


def folder_index(
    directory: str | Path,
    config: RouterConfig | None = None,
    search_terms: dict[str, tuple[str, ...]] | None = None,
    examples: dict[str, tuple[str, ...]] | None = None,
) -> RouterIndex:
    """The folder's packages as a router index; ``search_terms`` and ``examples`` (package id → terms,
    → example questions) stand for what curators accepted (knowledge/search_terms.py), so a model's
    proposal can be measured before it is."""
    entries = load_package_folder(directory)
    ids = {e.package_id for e in entries}
    for label, given in (("search terms", search_terms), ("example questions", examples)):
        unknown = sorted(set(given or ()) - ids)
        if unknown:
            raise ValueError(f"{label} for packages not in the folder: {', '.join(unknown[:10])}")
    if search_terms:
        entries = [
            dataclasses.replace(e, search_terms=tuple(search_terms[e.package_id]))
            if e.package_id in search_terms
            else e
            for e in entries
        ]
    entries = with_example_questions(entries, examples)
    return RouterIndex(entries, config=config, dense=folder_dense(entries, examples=examples))


def with_example_questions(entries: list[Entry], examples: dict[str, tuple[str, ...]] | None) -> list[Entry]:
    """``entries`` carrying ``examples`` (package id → questions) as their accepted example questions."""
    if not examples:
        return entries
    return [
        dataclasses.replace(e, example_questions=tuple(examples[e.package_id])) if examples.get(e.package_id) else e
        for e in entries
    ]


def search_terms_file(path: str | Path, languages: tuple[str, ...] | None = None) -> dict[str, tuple[str, ...]]:
    """A file of search terms per package: ``{"PKG_ID": {"en": [...], "es": [...]}}`` (the model's
    proposals, as the admin shows them) or ``{"PKG_ID": [...]}``; ``languages`` keeps only those lists.
    Each package's terms are cleaned and bounded as accepted terms are (``search_terms.clean_terms``)."""
    from django.core.exceptions import ValidationError

    from knowledge.search_terms import MAX_TERMS_PER_LANGUAGE, clean_terms

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("search terms: a JSON object of package id → terms")
    out: dict[str, tuple[str, ...]] = {}
    for package_id, value in data.items():
        try:
            if isinstance(value, dict):  # per language, each list bounded as a proposal's is
                lists = [
                    clean_terms(terms)[:MAX_TERMS_PER_LANGUAGE]
                    for lang, terms in value.items()
                    if languages is None or lang in languages
                ]
                out[package_id] = tuple(dict.fromkeys(t for terms in lists for t in terms))
            else:
                out[package_id] = tuple(clean_terms(value))
        except ValidationError as exc:
            raise ValueError(f"search terms of {package_id}: {' '.join(exc.messages)}") from exc
    return out


def example_questions_file(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A file of example questions per package: ``{"PKG_ID": {"pt": [...], "en": [...], "es": [...]}}``
    (the model's proposals) or ``{"PKG_ID": [...]}``; each package's questions cleaned and bounded as
    accepted ones are (``dense.clean_questions``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("example questions: a JSON object of package id → questions")
    out: dict[str, tuple[str, ...]] = {}
    for package_id, value in data.items():
        lists = list(value.values()) if isinstance(value, dict) else [value]
        if not all(isinstance(questions, list) for questions in lists):
            raise ValueError(f"example questions of {package_id}: a list per language")
        try:
            out[package_id] = tuple(clean_questions([q for questions in lists for q in questions]))
        except ValueError as exc:
            raise ValueError(f"example questions of {package_id}: {exc}") from exc
    return out


def out_of_scope_file(path: str | Path) -> tuple[str, ...]:
    """A file of a catalog's out-of-scope questions: ``{"pt": [...], "en": [...], "es": [...]}`` (the
    model's proposals) or a list; cleaned and bounded as curators' sets are (``dense.clean_questions``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    lists = list(data.values()) if isinstance(data, dict) else [data]
    if not all(isinstance(questions, list) for questions in lists):
        raise ValueError("out-of-scope questions: a list, or a list per language")
    return tuple(clean_questions([q for questions in lists for q in questions], limit=MAX_OUT_OF_SCOPE_TOTAL))


def embedding_cache() -> EmbeddingCache:
    """Passage vectors of folder catalogs, cached under the var dir (re-evaluating never re-embeds)."""
    root = Path(os.environ.get("CONTEXTO_VAR_DIR") or Path(__file__).resolve().parents[1] / "var")
    return EmbeddingCache(root / "embeddings")


def folder_dense(entries, body_chars: int | None = None, examples=None) -> DenseIndex | None:
    """Entry vectors for a folder catalog (None when the model is switched off or missing);
    ``examples``: package id → example questions blended into that entry's vector."""
    return folder_dense_index(entries, embedding_cache(), body_chars=body_chars, examples=examples)
