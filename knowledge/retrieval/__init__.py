"""Pure retrieval: entries, the index, signals, fusion, shaping, splitting, the sparse BM25+ index.

No Django imports here: this is the hot path, tested and benchmarked as plain code.
The Django lifecycle (per-process index, cache, feedback) is in ``knowledge.routing_service``.
"""

from .bm25 import SparseBM25Index
from .entries import Entry, RouterConfig
from .fusion import estimate_tokens, weighted_rrf
from .index import RouterIndex
from .shaping import Delivered, RouteResult
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
