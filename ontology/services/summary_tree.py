"""RAPTOR's summary tree: built at ingest (Celery task), stored and versioned.

The LLM writes the summaries; with the offline provider, or when the provider fails, they
are extractive (``routing.summary_tree.extractive_summary``). The slow calls run outside
any transaction; the new version is written in one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Max

from llm import ChatMessage, LLMRequest, ProviderUnavailable
from llm.runtime import llm_settings, provider_for_settings
from ontology.models import SummaryNode, SummaryTree
from ontology.selectors import indexed_corpus, indexed_corpus_key
from ontology.routing.summary_tree import build_tree, extractive_summary

logger = logging.getLogger(__name__)
SUMMARY_PROMPT = (
    "Resuma em até duas frases, em português, o que os trechos abaixo dizem em comum, sem "
    "acrescentar nada que eles não digam. Responda só com o resumo."
)


def _llm_summarizer():
    """The configured provider's summarizer, or None for the offline (extractive) one."""
    provider = provider_for_settings(llm_settings())
    if provider.name == "offline":
        return None, "offline"

    def summarize(texts: Sequence[str]) -> str:
        request = LLMRequest(
            messages=(ChatMessage("system", SUMMARY_PROMPT), ChatMessage("user", "\n\n".join(texts)[:8000]))
        )
        try:
            text = provider.complete(request).text.strip()
        except ProviderUnavailable as exc:
            logger.warning("ontology.summary_tree provider_unavailable reason=%s", exc.reason)
            return extractive_summary(texts)
        return text[:600] or extractive_summary(texts)

    return summarize, provider.name


def summary_tree_build(*, force: bool = False) -> SummaryTree | None:
    """A new tree version for the indexed chunks, unless the latest was built from them."""
    started = time.perf_counter()
    key = indexed_corpus_key()
    latest = SummaryTree.objects.order_by("-version").first()
    if latest is not None and latest.corpus_key == key and not force:
        return latest
    corpus = indexed_corpus()
    if not len(corpus):
        return None
    summarizer, provider = _llm_summarizer()
    nodes = build_tree(corpus.records, summarizer)
    with transaction.atomic():
        version = (SummaryTree.objects.select_for_update().aggregate(v=Max("version"))["v"] or 0) + 1
        tree = SummaryTree.objects.create(version=version, corpus_key=key, provider=provider, nodes_count=len(nodes))
        SummaryNode.objects.bulk_create(
            SummaryNode(
                tree=tree, path=n.path, level=n.level, parent=n.parent, text=n.text, chunk_ids=list(n.chunk_ids)
            )
            for n in nodes
        )
    logger.info(
        "ontology.summary_tree version=%s nodes=%d provider=%s ms=%d",
        tree.version,
        len(nodes),
        provider,
        int((time.perf_counter() - started) * 1000),
    )
    return tree
