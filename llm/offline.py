"""The embedded provider: extractive answers, no network, never invents.

It answers with the section of the delivered knowledge (a heading and what
follows it, up to the next heading) that best covers the user's words, says
it is an excerpt and names the package it came from. Tables keep their
header with the rows the question names (never a bare header). When nothing delivered fits
but a catalog entry does, it follows the same reply contract as a real model
and asks for that package with ``s=99``; when nothing fits at all it says it
does not know. It only ever quotes text it was given.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from common.identifiers import wikilink_targets
from common.text import content_words

from .base import CatalogItem, KnowledgeItem, LLMRequest, LLMResult
from .ontology_prose import ontology_answer

DONT_KNOW_MESSAGE = (
    "Não encontrei essa informação no conhecimento disponível para este atendimento. "
    "Posso encaminhar sua pergunta para uma pessoa da equipe, se preferir."
)
EXCERPT_NOTE = "Trecho do material de referência (citação literal):"
FETCH_COVERAGE = 0.25  # below this, neither a passage nor a catalog line "fits"
MAX_PASSAGE_CHARS = 900  # one block (paragraph, list, table) of a section
MAX_SECTION_CHARS = 1500  # a whole section, blocks in order; a long section keeps its first blocks
# A short passage that mostly points elsewhere ("see [[DELIVERY_TIMELINES]]") is not an answer
# when the package it points to was delivered too; the order bonus favours the router's ranking.
POINTER_PENALTY = 0.5
POINTER_MAX_CHARS = 160
ORDER_BONUS = 0.15


def terms(text: str) -> list[str]:
    """Content terms of a question, a passage or a catalog line (the shared text floor)."""
    return content_words(text)


@dataclass(frozen=True)
class Passage:
    """One section of a package: the blocks under a heading, up to the next heading."""

    package_id: str
    title: str
    heading: str
    text: str
    heading_line: str = ""  # the Markdown heading as written ("## Urgência"), quoted with the section
    blocks: tuple[str, ...] = ()


def _clip(text: str) -> str:
    if len(text) <= MAX_PASSAGE_CHARS:
        return text
    cut = text.rfind(". ", 0, MAX_PASSAGE_CHARS)
    return text[: cut + 1] if cut > MAX_PASSAGE_CHARS // 3 else text[:MAX_PASSAGE_CHARS].rstrip() + "…"


def split_passages(item: KnowledgeItem) -> list[Passage]:
    """The sections of a Markdown body: each heading with the blocks that follow it."""

    passages: list[Passage] = []
    heading, heading_line, blocks = "", "", []

    def close() -> None:
        if blocks:
            passages.append(
                Passage(item.package_id, item.title, heading, "\n\n".join(blocks), heading_line, tuple(blocks))
            )

    for block in re.split(r"\n\s*\n", item.body.replace("\r\n", "\n")):
        lines = [line.rstrip() for line in block.strip().splitlines() if line.strip()]
        while lines and lines[0].lstrip().startswith("#"):
            close()
            heading_line = lines.pop(0).strip()
            heading, blocks = heading_line.lstrip("#").strip(), []
        if lines:
            blocks.append(_clip("\n".join(lines)))
    close()
    return passages


def _idf(documents: list[set[str]]) -> dict[str, float]:
    n = len(documents)
    df: dict[str, int] = {}
    for doc in documents:
        for term in doc:
            df[term] = df.get(term, 0) + 1
    return {term: math.log(1 + n / count) for term, count in df.items()}


def _coverage(query: set[str], doc: set[str], weights: dict[str, float], default: float) -> float:
    total = sum(weights.get(t, default) for t in query)
    if not total:
        return 0.0
    return sum(weights.get(t, default) for t in query & doc) / total


def _focus(text: str, query: set[str]) -> str:
    """From a table, keep its header and the rows that best match the question.

    Only body rows compete: a header naming the question's words ("Prazo", "Urgência")
    must not win on its own and leave a bare header. Lists and tables no row of which
    matches stay whole.
    """
    lines = text.splitlines()
    is_table = len(lines) > 3 and all(line.lstrip().startswith("|") for line in lines)
    if not is_table or not re.fullmatch(r"[\s|:\-]+", lines[1]):
        return text
    hits = [len(query & set(terms(line))) for line in lines[2:]]
    best = max(hits)
    if best == 0:
        return text
    return "\n".join([lines[0], lines[1], *(row for row, h in zip(lines[2:], hits) if h == best)])


def _section_text(passage: Passage, query: set[str]) -> str:
    """The section as quoted: its heading, then its blocks in order within MAX_SECTION_CHARS."""
    out = [passage.heading_line] if passage.heading_line else []
    size = len(passage.heading_line)
    for block in passage.blocks or (passage.text,):
        block = _focus(block, query)
        if out and size + len(block) > MAX_SECTION_CHARS and len(out) > (1 if passage.heading_line else 0):
            break
        out.append(block)
        size += len(block) + 2
    return "\n\n".join(out)


def package_scores(query: set[str], catalog: tuple[CatalogItem, ...]) -> dict[str, float]:
    """How well each catalog line (ID, title, summary, aliases, keywords) covers the question."""
    if not catalog or not query:
        return {}
    docs = []
    for item in catalog:
        text = " ".join([item.package_id, item.title, item.summary, *item.aliases, *item.keywords])
        docs.append(set(terms(text)))
    weights = _idf(docs)
    default = math.log(1 + len(docs))
    return {item.package_id: _coverage(query, doc, weights, default) for item, doc in zip(catalog, docs)}


def best_passage(
    query: set[str], knowledge: tuple[KnowledgeItem, ...], package_weight: dict[str, float] | None = None
) -> tuple[float, Passage | None]:
    """The delivered passage covering most of the question; ties go to the better-matching package."""
    passages = [p for item in knowledge for p in split_passages(item)]
    if not passages or not query:
        return 0.0, None
    docs = [set(terms(p.text)) | set(terms(p.heading)) | set(terms(p.title)) for p in passages]
    weights = _idf(docs)
    default = math.log(1 + len(docs))  # a query word found nowhere weighs like the rarest word
    package_weight = package_weight or {}
    order = [item.package_id for item in knowledge]
    delivered = set(order)
    best: tuple[float, float, Passage | None] = (0.0, 0.0, None)
    for passage, doc in zip(passages, docs):
        if not query & set(terms(passage.text)):
            continue  # a heading alone is not an answer
        coverage = _coverage(query, doc, weights, default)
        rank = coverage + 0.3 * package_weight.get(passage.package_id, 0.0)
        rank += ORDER_BONUS * (len(order) - order.index(passage.package_id)) / len(order)
        links = set(wikilink_targets(passage.text))
        if len(passage.text) <= POINTER_MAX_CHARS and links & (delivered - {passage.package_id}):
            rank -= POINTER_PENALTY
        if rank > best[1]:
            best = (coverage, rank, passage)
    return best[0], best[2]


def answer_offline(request: LLMRequest) -> str:
    """The reply (contract JSON) the offline provider gives to ``request``."""

    # ontology agents: the seed's answer shape from the route's steps, sources cited
    if (prose := ontology_answer(request.messages[0].content if request.messages else "")) is not None:
        return json.dumps({"s": 0, "message": prose}, ensure_ascii=False)
    query = set(terms(request.user_text))
    scores = package_scores(query, request.catalog)
    delivered = {item.package_id for item in request.knowledge}
    kinds = {item.package_id: item.kind for item in request.catalog}

    # Ask for the package the catalog says fits best, unless one delivered fits as well.
    if scores:
        top_id = max(scores, key=lambda pid: scores[pid])
        delivered_best = max((scores.get(pid, 0.0) for pid in delivered), default=0.0)
        if top_id not in delivered and scores[top_id] >= FETCH_COVERAGE and scores[top_id] > delivered_best:
            requested = f"::{top_id}" if kinds.get(top_id) == "procedure" else top_id
            return json.dumps({"s": 99, "context_needed": requested})

    coverage, passage = best_passage(query, request.knowledge, scores)
    if passage is not None and coverage >= FETCH_COVERAGE:
        return _answer(passage, query)
    return json.dumps({"s": 0, "message": DONT_KNOW_MESSAGE}, ensure_ascii=False)


def _answer(passage: Passage, query: set[str]) -> str:
    source = f"{passage.title} ({passage.package_id})" if passage.title else passage.package_id
    message = f"{EXCERPT_NOTE}\n\n{_section_text(passage, query)}\n\nFonte: {source}"
    return json.dumps({"s": 0, "message": message}, ensure_ascii=False)


class OfflineProvider:
    name = "offline"

    def complete(self, request: LLMRequest) -> LLMResult:
        return LLMResult(text=answer_offline(request), model="offline-extractive")
