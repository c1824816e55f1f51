"""RAPTOR's tree of recursive summaries over the taxonomy branches, and its top-down walk.

Leaves are the chunks. Level 2 nodes are the two-level branches of ``ramo_taxonomia``
("diagnostico/causas"), each summarized from its chunks; level 1 nodes are the top
branches ("diagnostico"), each summarized from its children's summaries (recursive, as
RAPTOR does). The summarizer is a parameter: the LLM writes them in production; the
offline provider (and any provider failure) gets :func:`extractive_summary`, which keeps
the sentences that carry the group's most frequent terms.

Retrieval walks the tree top-down: the level-1 summaries are scored against the query,
then the best node's children, then the chunks of the best child (BM25 within the route's
filters); the next child, then the next top node, fill up to ``k``. The tree is built at
ingest by a Celery task, stored and versioned (``SummaryTree``/``SummaryNode``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from .search import BM25_PARAMS, SparseBM25Index, analyze

_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+")
SUMMARY_SENTENCES = 2
MAX_SUMMARY_CHARS = 1200


def branch_path(ramo: str, level: int) -> str:
    return "/".join(ramo.split("/")[:level])


def extractive_summary(texts: Sequence[str], max_sentences: int = SUMMARY_SENTENCES) -> str:
    """The sentences carrying the group's most frequent terms, in their original order."""
    sentences = [s.strip() for t in texts for s in _SENTENCE_RE.split(t.strip()) if s.strip()]
    if not sentences:
        return ""
    freq = Counter(term for s in sentences for term in set(analyze(s)))
    scored = []
    for i, sentence in enumerate(sentences):
        terms = set(analyze(sentence))
        score = sum(freq[t] for t in terms) / (1 + len(terms)) ** 0.5 if terms else 0.0
        scored.append((score, i))
    keep = sorted(i for _, i in sorted(scored, key=lambda si: (-si[0], si[1]))[:max_sentences])
    return " ".join(sentences[i] for i in keep)[:MAX_SUMMARY_CHARS]


@dataclass(frozen=True)
class TreeNode:
    path: str
    level: int
    text: str
    chunk_ids: tuple[str, ...]
    parent: str = ""


TOP_SUMMARY_SENTENCES = 4


def build_tree(records: Iterable, summarize: Callable[[Sequence[str]], str] | None = None) -> list[TreeNode]:
    """Level-2 nodes from the chunks, then level-1 nodes from the level-2 summaries (a top
    node covers more, so its extractive summary keeps more sentences)."""
    leaf_summary = summarize or extractive_summary
    top_summary = summarize or (lambda texts: extractive_summary(texts, TOP_SUMMARY_SENTENCES))
    by_branch: dict[str, list] = {}
    for record in records:
        if record.branch:
            by_branch.setdefault(branch_path(record.branch, 2), []).append(record)
    level2 = [
        TreeNode(path, 2, leaf_summary([r.text for r in rs]), tuple(r.chunk_id for r in rs), branch_path(path, 1))
        for path, rs in sorted(by_branch.items())
    ]
    parents: dict[str, list[TreeNode]] = {}
    for node in level2:
        parents.setdefault(node.parent, []).append(node)
    level1 = [
        TreeNode(path, 1, top_summary([c.text for c in children]), tuple(i for c in children for i in c.chunk_ids))
        for path, children in sorted(parents.items())
    ]
    return level1 + level2


@dataclass
class SummaryTreeIndex:
    """The stored tree, searchable: one BM25 index over the node summaries."""

    version: int
    nodes: list[TreeNode]
    index: SparseBM25Index | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.nodes:
            self.index = SparseBM25Index.build(
                [analyze(f"{n.path.replace('_', ' ')} {n.text}") for n in self.nodes], **BM25_PARAMS
            )

    def ranked(self, query_terms: Sequence[str], allowed: set[str]) -> list[tuple[TreeNode, float]]:
        """Nodes among `allowed` paths, best first (ties by path)."""
        if self.index is None or not query_terms:
            return []
        scores = self.index.match_scores(list(query_terms))
        out = [(n, float(scores[i])) for i, n in enumerate(self.nodes) if n.path in allowed]
        return sorted(out, key=lambda ns: (-ns[1], ns[0].path))
