"""The bundled ontology data files (ontology/data/*.yaml), loaded once per process."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
SCHEMA_DIR = DATA_DIR / "schemas"
SAMPLE_CHUNKS_FILE = DATA_DIR / "chunks.jsonl"
CURRENT_SCHEMA_VERSION = "ontologia_v2_2026.05"


def _load_yaml(name: str) -> dict[str, Any]:
    with (DATA_DIR / name).open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@lru_cache(maxsize=1)
def classes_file() -> dict[str, Any]:
    return _load_yaml("classes.yaml")


@lru_cache(maxsize=1)
def skills_file() -> dict[str, Any]:
    return _load_yaml("skills.yaml")


@lru_cache(maxsize=1)
def patterns_file() -> dict[str, Any]:
    return _load_yaml("patterns.yaml")


@lru_cache(maxsize=1)
def vocabulary() -> dict[str, Any]:
    return _load_yaml("vocabulary.yaml")


@lru_cache(maxsize=8)
def metadata_schema(version: str = CURRENT_SCHEMA_VERSION) -> dict[str, Any]:
    path = SCHEMA_DIR / f"{version}.json"
    if not path.is_file():
        raise KeyError(version)
    return json.loads(path.read_text(encoding="utf-8"))


def strategies() -> tuple[str, ...]:
    return tuple(patterns_file()["strategies"])


def critical_class_ids() -> frozenset[str]:
    return frozenset(c["id"] for c in classes_file()["classes"] if c.get("critical"))


def label(key: str) -> str:
    """Readable pt label of a vocabulary id ("fixacao_biologica_n" → "fixação biológica de nitrogênio")."""
    vocab = vocabulary()
    if key in vocab["sintomas"]:
        return vocab["sintomas"][key]["label"]
    return vocab["labels"].get(key, key.replace("_", " "))
