"""multi_hop_guiado: the diagnostic Chain of Thought of seed 002, run as retrieval hops.

symptom → probable cause → process → structure → intervention → practice → indicator.

Each step
1. forms its intent from the previous step's findings (their readable labels),
2. retrieves with its own class filter + the context filters, keeping the candidates
   related to the previous findings (shared relation keys, e.g. ``sintomas_aplicaveis``
   includes ``baixa_nodulacao`` for the causes), ranked by BM25 over the intent (a hop
   uses ``hibrida``) plus relation overlap,
3. passes its findings on: the chunks it kept and the relation keys / terms they carry.

The symptoms found in step 1 anchor every later step. Interruptions: step 1 without a
clear symptom → clarifying question; step 2 without convergence → disambiguation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from .corpus import Corpus, Hit
from .data import label
from .messages import CLARIFY_SYMPTOM, DISAMBIGUATION
from .search import analyze
from .strategies import StrategyRun, make_step

STEP_K = 3
# a hit is a finding when it scores at least this share of the step's best
FINDING_SHARE = 0.5
# step 2 converges when at most this many causes score within NEAR_SHARE of the best
CONVERGENCE_MAX_CAUSES = 3
NEAR_SHARE = 0.8

STEP_TITLES = {
    "sintoma": "Sintoma",
    "causa_provavel": "Causas prováveis",
    "processo": "Processos afetados",
    "estrutura": "Estruturas",
    "intervencao": "Intervenções",
    "pratica": "Práticas",
    "indicador": "Indicadores",
}
INTENTS = {
    "sintoma": "Qual sintoma descreve a observação do produtor{ctx}?",
    "causa_provavel": "Quais causas prováveis explicam {prev}{ctx}?",
    "processo": "Quais processos são afetados por {prev}{ctx}?",
    "estrutura": "Quais estruturas sustentam {prev}?",
    "intervencao": "Quais intervenções fortalecem {prev}{ctx}?",
    "pratica": "Quais práticas sustentam {prev} ao longo do tempo?",
    "indicador": "Quais indicadores acompanham {prev}?",
}
# which relation kinds a step's findings hand to the next step
PASS_ON = {
    "sintoma": ("sintoma",),
    "causa_provavel": ("processo",),
    "processo": ("processo", "estrutura"),
    "estrutura": ("estrutura", "processo"),
    "intervencao": ("pratica", "estrutura"),
    "pratica": ("pratica", "processo", "estrutura"),
    "indicador": ("indicador",),
}
# the diagnosis part of the chain also reads the producer's own words
USES_MESSAGE = frozenset({"sintoma", "causa_provavel"})

_COLOUR_RE = re.compile(r"\b(amarel\w*|verde\w*|roxa\w*|manchas?|yellow\w*|green|purple|amarill\w*|spots?)\b")
_AGE_RE = re.compile(r"\b(anos?|safras?|semanas?|dias|meses|years?|seasons?|weeks?|days|months?|campanas?)\b")


def _ctx_phrase(context_filters: Mapping[str, Sequence[str]]) -> str:
    parts = []
    if context_filters.get("cultura"):
        parts.append(" em " + " e ".join(label(c) for c in context_filters["cultura"]))
    if context_filters.get("bioma"):
        parts.append(" no " + " e ".join(label(b).title() for b in context_filters["bioma"]))
    return "".join(parts)


def _labels(keys: Sequence[str]) -> list[str]:
    return [label(k.split(":", 1)[1]) for k in keys]


def _prev_phrase(keys: Sequence[str], limit: int = 4) -> str:
    names = _labels(keys[:limit])
    if not names:
        return "o quadro observado"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " e " + names[-1]


def _rank(corpus: Corpus, cands: np.ndarray, query_terms: Sequence[str], relation: frozenset[str]) -> list[Hit]:
    bm25 = corpus.match_scores(query_terms, cands)
    overlaps = np.asarray([len(corpus.records[i].relation_keys & relation) for i in cands.tolist()], dtype=float)
    bm25_max = float(bm25.max()) if bm25.size and bm25.max() > 0 else 1.0
    ov_max = float(overlaps.max()) if overlaps.size and overlaps.max() > 0 else 1.0
    scored = []
    for pos, b, ov in zip(cands.tolist(), bm25.tolist(), overlaps.tolist()):
        score = b / bm25_max + ov / ov_max
        if score > 0:
            scored.append(Hit(corpus.records[pos], round(score, 4), {"bm25": round(b, 4), "shared": int(ov)}))
    scored.sort(key=lambda h: (-h.score, corpus.position[h.record.chunk_id]))
    return scored


def _findings(step: str, hits: Sequence[Hit], anchor: Sequence[str], k: int = STEP_K) -> tuple[list[Hit], list[str]]:
    if not hits:
        return [], []
    top = hits[0].score
    kept = [h for h in hits[:k] if h.score >= FINDING_SHARE * top]
    kinds = PASS_ON[step]
    keys: list[str] = []
    for h in kept:
        for key in sorted(h.record.relation_keys):
            if key.split(":", 1)[0] in kinds and key not in keys:
                keys.append(key)
    if step == "sintoma" and anchor:
        keys = [k for k in keys if k in anchor] or list(anchor)
    return kept, keys


def _salient_terms(corpus: Corpus, hits: Sequence[Hit], exclude: set[str], n: int = 6) -> list[str]:
    counts: dict[str, float] = {}
    index = corpus.index
    for h in hits:
        for term in corpus.doc_terms[corpus.position[h.record.chunk_id]]:
            if term not in exclude and len(term) > 3:
                counts[term] = counts.get(term, 0.0) + (index.idf(term) if index is not None else 1.0)
    return [t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def disambiguation_questions(normalized_message: str, lang: str) -> list[dict]:
    wanted = []
    if not _COLOUR_RE.search(normalized_message):
        wanted.append("cor_folhas")
    if not _AGE_RE.search(normalized_message):
        wanted.append("idade_problema")
    wanted.append("historico_recente")
    return [{"id": q, "text": DISAMBIGUATION[q][lang]} for q in wanted[:2]]


def multi_hop_guiado(
    corpus: Corpus,
    *,
    message: str,
    normalized_message: str,
    symptoms: Sequence[str],
    context_filters: Mapping[str, Sequence[str]],
    template: Sequence[str],
    lang: str = "pt",
    step_slots: Sequence[int] | None = None,
) -> StrategyRun:
    """`step_slots`: how many chunks each step may keep (the chain's share of the evidence
    budget); by default ``STEP_K`` each."""
    run = StrategyRun()
    message_terms = analyze(message)
    anchor = [f"sintoma:{s}" for s in symptoms]
    prev_keys: list[str] = list(anchor)
    prev_ids: list[str] = []
    prev_terms: list[str] = []  # salient (index) terms of the previous step's chunks
    ctx = _ctx_phrase(context_filters)
    for index, step in enumerate(template):
        filters = {**context_filters, "classe_ontologica": [step]}
        intent = INTENTS[step].format(prev=_prev_phrase(prev_keys), ctx=ctx)
        relation = frozenset(prev_keys) | frozenset(anchor)
        query_terms = analyze(intent) + analyze(" ".join(_labels(sorted(relation)))) + prev_terms
        if step in USES_MESSAGE or index == 0:
            query_terms += message_terms
        cands = corpus.candidates(filters)
        related = np.asarray([i for i in cands.tolist() if corpus.records[i].relation_keys & relation], dtype=np.int64)
        status = "ok"
        if related.size == 0:
            status = "relation_fallback" if relation else "ok"
            related = cands
        hits = _rank(corpus, related, query_terms, relation)
        if step == "sintoma" and not anchor:
            # no symptom named in the vocabulary: accept a BM25 match on two or more words
            hits = [
                h
                for h in hits
                if len(set(message_terms) & set(corpus.doc_terms[corpus.position[h.record.chunk_id]])) >= 2
            ]
        kept, keys = _findings(step, hits, anchor, step_slots[index] if step_slots else STEP_K)
        section = make_step(
            step,
            "hibrida",
            intent,
            filters,
            kept,
            title=STEP_TITLES[step],
            uses={"chunks": list(prev_ids), "keys": sorted(relation), "salient_terms": list(prev_terms)},
            findings={
                "keys": keys,
                "terms": _labels(keys),
                "salient_terms": _salient_terms(corpus, kept, set(query_terms)),
            },
            status=status,
        )
        run.steps.append(section)
        run.hits.extend(kept)
        if index == 0 and step == "sintoma" and not kept:
            section["status"] = "inconclusive"
            run.interruptions.append(
                {
                    "type": "clarifying_question",
                    "step": step,
                    "questions": [{"id": "descrever_sintoma", "text": CLARIFY_SYMPTOM[lang]}],
                }
            )
            return run
        if step == "sintoma" and not anchor:
            anchor = [k for k in keys]
        if step == "causa_provavel" and hits:
            near = [h for h in hits if h.score >= NEAR_SHARE * hits[0].score]
            section["convergence"] = {"near_causes": [h.record.chunk_id for h in near]}
            if len(near) > CONVERGENCE_MAX_CAUSES:
                section["status"] = "not_converged"
                run.interruptions.append(
                    {
                        "type": "disambiguation",
                        "step": step,
                        "candidates": [h.record.chunk_id for h in near],
                        "questions": disambiguation_questions(normalized_message, lang),
                    }
                )
                return run
        if kept:
            prev_keys, prev_ids = keys, [h.record.chunk_id for h in kept]
            prev_terms = section["findings"]["salient_terms"]
    return run
