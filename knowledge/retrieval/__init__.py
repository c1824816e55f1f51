"""Pure retrieval: the sparse BM25+ index, fusion, splitting, the router core.

No Django imports here: this is the hot path, tested and benchmarked as plain code.
The Django lifecycle (per-process index, cache, feedback) is in ``knowledge.router``.
"""

from .bm25 import SparseBM25Index
from .fusion import estimate_tokens, weighted_rrf
from .router import Delivered, Entry, RouteResult, RouterConfig, RouterIndex
from .splitting import split_parts

__all__ = [
    "Delivered",
    "Entry",
    "RouteResult",
    "RouterConfig",
    "RouterIndex",
    "SparseBM25Index",
    "estimate_tokens",
    "split_parts",
    "weighted_rrf",
]
