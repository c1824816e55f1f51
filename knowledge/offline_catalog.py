"""A folder of package files as an in-memory router index, without the database.

For measuring a catalog before (or without) importing it: `evaluate_retrieval
--catalog DIR` and the tuning script read packages this way, so nothing is
written to the database catalog and nothing it holds is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from knowledge.package_files import package_files_in, parse_package_file
from knowledge.retrieval import Entry, RouterConfig, RouterIndex
from knowledge.retrieval.dense import DenseIndex, EmbeddingCache, folder_dense_index


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


def folder_index(directory: str | Path, config: RouterConfig | None = None) -> RouterIndex:
    entries = load_package_folder(directory)
    return RouterIndex(entries, config=config, dense=folder_dense(entries))


def embedding_cache() -> EmbeddingCache:
    """Passage vectors of folder catalogs, cached under the var dir (re-evaluating never re-embeds)."""
    root = Path(os.environ.get("CONTEXTO_VAR_DIR") or Path(__file__).resolve().parents[1] / "var")
    return EmbeddingCache(root / "embeddings")


def folder_dense(entries, body_chars: int | None = None) -> DenseIndex | None:
    """Entry vectors for a folder catalog (None when the model is switched off or missing)."""
    return folder_dense_index(entries, embedding_cache(), body_chars=body_chars)
