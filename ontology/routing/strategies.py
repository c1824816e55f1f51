"""The retrieval strategies of the matrix, each real over the chunk corpus.

Every strategy applies its metadata filters first (candidates), then scores with BM25
inside them. Each returns a :class:`StrategyRun`: the steps it took (one section each,
with chunk citations) and the hits it cites, in order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .corpus import CASE_EVIDENCE_TYPES, ChunkRecord, Corpus, Hit
from .search import BM25_PARAMS, SparseBM25Index


@dataclass
class StrategyRun:
    steps: list[dict] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    interruptions: list[dict] = field(default_factory=list)

    def extend(self, other: StrategyRun) -> None:
        self.steps.extend(other.steps)
        self.hits.extend(other.hits)
        self.interruptions.extend(other.interruptions)


def make_step(name: str, strategy: str, intent: str, filters: Mapping, hits: Sequence[Hit], **extra) -> dict:
    return {
        "name": name,
        "strategy": strategy,
        "intent": intent,
        "filters": {k: list(v) for k, v in filters.items()},
        "chunks": [h.citation() for h in hits],
        **extra,
    }


def hibrida(
    corpus: Corpus, query_terms: Sequence[str], filters: Mapping, *, intent: str = "", k: int = 5, name: str = "hibrida"
) -> StrategyRun:
    """BM25 within the metadata filters."""
    hits = corpus.search(query_terms, filters, k)
    return StrategyRun([make_step(name, "hibrida", intent, filters, hits)], hits)


def casos_semelhantes(
    corpus: Corpus,
    query_terms: Sequence[str],
    context_filters: Mapping,
    *,
    intent: str = "",
    k: int = 3,
    name: str = "casos_semelhantes",
    role: str = "primary",
) -> StrategyRun:
    """Case-type evidence (validated cases, producer reports, case studies) matching the
    context filters, ranked by BM25 and then by reliability."""
    cands = corpus.candidates(context_filters, lambda r: r.meta.get("tipo_evidencia") in CASE_EVIDENCE_TYPES)
    scores = corpus.match_scores(query_terms, cands)
    ranked = sorted(
        ((corpus.records[i], float(s)) for i, s in zip(cands.tolist(), scores.tolist()) if s > 0),
        key=lambda rs: (-rs[1], -float(rs[0].meta.get("confiabilidade") or 0), corpus.position[rs[0].chunk_id]),
    )
    hits = [Hit(r, s) for r, s in ranked[:k]]
    filters = {**context_filters, "tipo_evidencia": sorted(CASE_EVIDENCE_TYPES)}
    return StrategyRun([make_step(name, "casos_semelhantes", intent, filters, hits, role=role)], hits)


def _relation_overlap(a: ChunkRecord, b: ChunkRecord) -> list[str]:
    return sorted(a.relation_keys & b.relation_keys)


def graphrag(
    corpus: Corpus, query_terms: Sequence[str], filters: Mapping, *, intent: str = "", seeds: int = 3, k: int = 6
) -> StrategyRun:
    """Seed chunks by BM25 within the filters, then expansion over the graph whose edges
    are shared practices/processes/structures/symptoms and [[wiki-links]] (both ways).
    Neighbours must satisfy the same filters."""
    seed_hits = corpus.search(query_terms, filters, seeds)
    if not seed_hits:
        return StrategyRun([make_step("graphrag", "graphrag", intent, filters, [], expanded=[])], [])
    top = seed_hits[0].score or 1.0
    allowed = set(corpus.candidates(filters).tolist())
    seen = {h.record.chunk_id for h in seed_hits}
    best: dict[str, Hit] = {}
    for seed in seed_hits:
        shared_count: Counter[int] = Counter()
        for key in seed.record.relation_keys:
            shared_count.update(corpus.related.get(key, ()))
        linked = set(seed.record.wikilinks) | corpus.backlinks.get(seed.record.chunk_id, set())
        linked_pos = {corpus.position[c] for c in linked if c in corpus.position}
        for pos in (set(shared_count) | linked_pos) & allowed:
            other = corpus.records[pos]
            if other.chunk_id in seen:
                continue
            wikilink = pos in linked_pos
            edge = shared_count[pos] + (2 if wikilink else 0)
            score = (seed.score / top) * edge / (edge + 1.0)
            current = best.get(other.chunk_id)
            if current is None or score > current.score:
                why = {
                    "seed": seed.record.chunk_id,
                    "shared": _relation_overlap(seed.record, other),
                    "wikilink": wikilink,
                }
                best[other.chunk_id] = Hit(other, score, why)
    neighbours = sorted(best.values(), key=lambda h: (-h.score, corpus.position[h.record.chunk_id]))
    expanded = neighbours[: max(0, k - len(seed_hits))]
    hits = list(seed_hits) + expanded
    step = make_step(
        "graphrag",
        "graphrag",
        intent,
        filters,
        hits,
        seeds=[h.record.chunk_id for h in seed_hits],
        expanded=[h.record.chunk_id for h in expanded],
    )
    return StrategyRun([step], hits)


def _branch_node(path: str, depth: int = 2) -> str:
    return "/".join(path.split("/")[:depth])


def raptor(
    corpus: Corpus, query_terms: Sequence[str], filters: Mapping, *, intent: str = "", k: int = 5
) -> StrategyRun:
    """RAPTOR: walk the stored summary tree top-down when the corpus has one; otherwise
    taxonomy-branch retrieval (below)."""
    tree = getattr(corpus, "tree", None)
    if tree is not None and tree.nodes:
        return raptor_tree_walk(corpus, tree, query_terms, filters, intent=intent, k=k)
    return branch_retrieval(corpus, query_terms, filters, intent=intent, k=k)


def raptor_tree_walk(
    corpus: Corpus, tree, query_terms: Sequence[str], filters: Mapping, *, intent: str = "", k: int = 5
) -> StrategyRun:
    """Top-level summaries first, then the best node's children, then the chunks of the
    best child (BM25 within the filters); the next child, then the next top node, fill up
    to ``k``. Only nodes holding a candidate chunk are considered."""
    cands = corpus.candidates(filters).tolist()
    by_l2: dict[str, set[str]] = {}
    for pos in cands:
        record = corpus.records[pos]
        if record.branch:
            by_l2.setdefault(_branch_node(record.branch), set()).add(record.chunk_id)
    allowed_l1 = {p.split("/")[0] for p in by_l2}
    walk: list[dict] = []
    hits: list[Hit] = []
    for top, top_score in tree.ranked(query_terms, allowed_l1):
        children = tree.ranked(query_terms, {p for p in by_l2 if p.split("/")[0] == top.path})
        for child, child_score in children:
            if len(hits) >= k:
                break
            found = corpus.search(
                query_terms, filters, k - len(hits), predicate=lambda r, p=child.path: _branch_node(r.branch) == p
            )
            walk.append({"node": child.path, "parent": top.path, "score": round(child_score, 4), "chunks": len(found)})
            hits.extend(found)
        if len(hits) >= k:
            break
    tree_step = {
        "name": "raptor_arvore",
        "strategy": "raptor",
        "intent": intent,
        "filters": {kk: list(v) for kk, v in filters.items()},
        "chunks": [],
        "tree": {"version": tree.version, "walk": walk},
        "chosen": [w["node"] for w in walk],
    }
    chunk_step = make_step(
        "raptor_chunks", "raptor", intent, {**filters, "ramo_taxonomia_prefixo": tree_step["chosen"]}, hits
    )
    return StrategyRun([tree_step, chunk_step], hits)


def branch_retrieval(
    corpus: Corpus, query_terms: Sequence[str], filters: Mapping, *, intent: str = "", k: int = 5
) -> StrategyRun:
    """Taxonomy-branch retrieval, raptor's fallback while no summary tree matches the
    corpus: branches of ``ramo_taxonomia`` (two levels) are scored as documents made of
    all their candidate chunks' terms, the best branch's chunks come first, the next
    branch fills in up to ``k``."""
    cands = corpus.candidates(filters).tolist()
    groups: dict[str, list[int]] = {}
    for pos in cands:
        groups.setdefault(_branch_node(corpus.records[pos].branch), []).append(pos)
    if not groups or not query_terms:
        return StrategyRun([make_step("raptor_ramo", "raptor", intent, filters, [], branches=[])], [])
    names = sorted(groups)
    summaries = [[t for pos in groups[n] for t in corpus.doc_terms[pos]] for n in names]
    tree = SparseBM25Index.build(summaries, **BM25_PARAMS)
    ranked = tree.top_k(list(query_terms), len(names))
    branches = [{"ramo": names[i], "score": round(s, 4), "chunks": len(groups[names[i]])} for i, s in ranked]
    hits: list[Hit] = []
    used: list[str] = []
    for entry in branches:
        if len(hits) >= k:
            break
        prefix = entry["ramo"]
        used.append(prefix)
        hits.extend(
            corpus.search(
                query_terms, filters, k - len(hits), predicate=lambda r, p=prefix: _branch_node(r.branch) == p
            )
        )
    branch_step = {
        "name": "raptor_ramo",
        "strategy": "raptor",
        "intent": intent,
        "filters": {kk: list(v) for kk, v in filters.items()},
        "chunks": [],
        "branches": branches[:5],
        "chosen": used,
    }
    chunk_step = make_step("raptor_chunks", "raptor", intent, {**filters, "ramo_taxonomia_prefixo": used}, hits)
    return StrategyRun([branch_step, chunk_step], hits)
