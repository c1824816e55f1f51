"""The one import point for text analysis and BM25 (switch the backend here only).

Uses the shared retrieval core of the knowledge app (pt-first analyzer, sparse BM25+
with IDF over the whole corpus even when scoring is restricted to candidates).
"""

from common.text import analyze  # noqa: F401
from knowledge.retrieval.bm25 import SparseBM25Index  # noqa: F401

BM25_PARAMS = {"k1": 1.2, "b": 0.75, "delta": 1.0}
