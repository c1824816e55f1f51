"""An in-memory corpus of indexed chunks: metadata filters, then BM25 within them.

Filters are applied *before* scoring: they select candidate documents and BM25 only
scores those (IDF stays that of the whole corpus).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from common.identifiers import wikilink_targets

from .search import BM25_PARAMS, SparseBM25Index, analyze

RELATION_FIELDS = {
    "praticas_associadas": "pratica",
    "processos_afetados": "processo",
    "estruturas_fortalecidas": "estrutura",
    "sintomas_aplicaveis": "sintoma",
}
CASE_EVIDENCE_TYPES = frozenset({"caso_validado_gaas", "relato_produtor", "estudo_de_caso"})
WILDCARD = "*"


@dataclass(frozen=True)
class ChunkRecord:
    chunk_id: str
    text: str
    meta: Mapping[str, object]

    @property
    def class_id(self) -> str:
        return str(self.meta.get("classe_ontologica", ""))

    @property
    def branch(self) -> str:
        return str(self.meta.get("ramo_taxonomia", ""))

    def values(self, key: str) -> list[str]:
        value = self.meta.get(key)
        if value is None:
            return []
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value]
        return [str(value)]

    @cached_property
    def relation_keys(self) -> frozenset[str]:
        keys = set()
        for meta_field, kind in RELATION_FIELDS.items():
            keys.update(f"{kind}:{v}" for v in self.values(meta_field))
        return frozenset(keys)

    @cached_property
    def wikilinks(self) -> tuple[str, ...]:
        return tuple(wikilink_targets(self.text))

    def citation(self, score: float) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "classe_ontologica": self.class_id,
            "subclasse": self.meta.get("subclasse", ""),
            "score": round(float(score), 4),
            "tipo_evidencia": self.meta.get("tipo_evidencia", ""),
            "confiabilidade": self.meta.get("confiabilidade"),
            "fonte": self.meta.get("fonte", ""),
        }

    @classmethod
    def from_seed(cls, row: Mapping) -> ChunkRecord:
        """A flat seed-format row {chunk_id, texto, classe_ontologica, ...}."""
        meta = {k: v for k, v in row.items() if k not in ("chunk_id", "texto")}
        return cls(chunk_id=row["chunk_id"], text=row["texto"], meta=meta)


def matches(record: ChunkRecord, filters: Mapping[str, Sequence[str]]) -> bool:
    """Every filter key must intersect the chunk's values; a chunk value "*" matches any."""
    for key, allowed in filters.items():
        values = record.values(key)
        if not values:
            return False
        if WILDCARD in values:
            continue
        if not set(values) & set(allowed):
            return False
    return True


def _document_terms(record: ChunkRecord) -> list[str]:
    parts = [record.text, str(record.meta.get("subclasse", "")).replace("_", " ")]
    for meta_field in RELATION_FIELDS:
        parts.extend(v.replace("_", " ") for v in record.values(meta_field))
    return analyze(" ".join(parts))


@dataclass(frozen=True)
class Hit:
    record: ChunkRecord
    score: float
    why: Mapping[str, object] = field(default_factory=dict)

    def citation(self) -> dict:
        out = self.record.citation(self.score)
        if self.why:
            out["via"] = dict(self.why)
        return out


class Corpus:
    """Indexed chunks + a BM25 index over their text and relation labels."""

    def __init__(self, records: Iterable[ChunkRecord], *, version: object = None):
        self.records: tuple[ChunkRecord, ...] = tuple(records)
        self.version = version
        self.position = {r.chunk_id: i for i, r in enumerate(self.records)}
        self.doc_terms = [_document_terms(r) for r in self.records]
        self.index = SparseBM25Index.build(self.doc_terms, **BM25_PARAMS) if self.records else None
        self.tree = None  # the stored summary tree (summary_tree.SummaryTreeIndex) for raptor, when built
        self._postings: dict[str, dict[str, frozenset[int]]] = {}
        self.backlinks: dict[str, set[str]] = {}
        self.related: dict[str, list[int]] = {}  # relation key → positions (graph edges)
        for i, r in enumerate(self.records):
            for key in r.relation_keys:
                self.related.setdefault(key, []).append(i)
        for r in self.records:
            for target in r.wikilinks:
                self.backlinks.setdefault(target, set()).add(r.chunk_id)

    def __len__(self) -> int:
        return len(self.records)

    def get(self, chunk_id: str) -> ChunkRecord | None:
        pos = self.position.get(chunk_id)
        return self.records[pos] if pos is not None else None

    def _postings_for(self, key: str) -> dict[str, frozenset[int]]:
        """value → positions of the chunks carrying it (built once per metadata key)."""
        postings = self._postings.get(key)
        if postings is None:
            building: dict[str, set[int]] = {}
            for i, r in enumerate(self.records):
                for value in r.values(key):
                    building.setdefault(value, set()).add(i)
            postings = self._postings[key] = {v: frozenset(ps) for v, ps in building.items()}
        return postings

    def candidates(
        self, filters: Mapping[str, Sequence[str]], predicate: Callable[[ChunkRecord], bool] | None = None
    ) -> np.ndarray:
        """Positions of the chunks satisfying every filter (same semantics as :func:`matches`),
        from per-key postings, so the cost follows the matches, not the corpus size."""
        selected: set[int] | None = None
        for key, allowed in filters.items():
            postings = self._postings_for(key)
            hit: set[int] = set(postings.get(WILDCARD, ()))
            for value in allowed:
                hit |= postings.get(value, frozenset())
            selected = hit if selected is None else selected & hit
            if not selected:
                return np.zeros(0, dtype=np.int64)
        positions = range(len(self.records)) if selected is None else sorted(selected)
        if predicate is not None:
            positions = [i for i in positions if predicate(self.records[i])]
        return np.asarray(list(positions), dtype=np.int64)

    def match_scores(self, query_terms: Sequence[str], candidates: np.ndarray) -> np.ndarray:
        """BM25 scores of the candidates without the BM25+ floor (0 = no query term)."""
        if self.index is None or candidates.size == 0:
            return np.zeros(candidates.size)
        return self.index.match_scores(list(query_terms))[candidates]

    def search(
        self,
        query_terms: Sequence[str],
        filters: Mapping[str, Sequence[str]],
        k: int,
        predicate: Callable[[ChunkRecord], bool] | None = None,
    ) -> list[Hit]:
        cands = self.candidates(filters, predicate)
        if self.index is None or cands.size == 0 or not query_terms:
            return []
        return [Hit(self.records[i], s) for i, s in self.index.top_k(list(query_terms), k, candidates=cands)]
