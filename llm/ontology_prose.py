"""The offline provider's answer for ontology agents: the seed's answer shape, extractive.

The ontology context in the system prompt (``## Ontology reasoning for this message``)
lists the reasoning's steps ("## N. Title (strategy)") and under each the chunks
("- [chunk_id] text (fonte: …)"). The offline answer walks those steps in order (for a
diagnosis: symptom → causes → processes → … → intervention → indicators), takes the
first sentence of each step's first new chunk, and writes them as one paragraph of prose
with the chunk ids cited, then the sources. Supporting evidence (other strategies) is
cited only when no step had any.
"""

from __future__ import annotations

import re

SECTION = "## Ontology reasoning for this message"
_STEP_RE = re.compile(r"^## \d+\. (?P<title>.+?) \((?P<strategy>[a-z_]+)\)$")
_CHUNK_RE = re.compile(r"^- \[(?P<id>[^\]]+)\] (?P<text>.+?)(?: \(fonte: (?P<source>[^;]*);.*\))?$")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
SUPPORT_TITLE = "Evidência complementar"
# how each step opens in the prose (pt); unknown titles use "Sobre <title>,"
CONNECTORS = {
    "Sintoma": "O que você descreve corresponde a isto:",
    "Causas prováveis": "A causa mais provável:",
    "Processos afetados": "Isso afeta um processo do solo:",
    "Estruturas": "Esse processo depende de uma estrutura:",
    "Intervenções": "Para destravar, a intervenção indicada:",
    "Práticas": "Para sustentar ao longo do tempo:",
    "Indicadores": "Para acompanhar se está funcionando:",
}


def ontology_steps(system_prompt: str) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """[(step title, [(chunk_id, text, source)])] of the ontology section, in order."""
    if SECTION not in system_prompt:
        return []
    body = system_prompt.split(SECTION, 1)[1]
    steps: list[tuple[str, list[tuple[str, str, str]]]] = []
    for line in body.splitlines():
        if line.startswith("## ") and not _STEP_RE.match(line):
            break  # the next section of the prompt
        if m := _STEP_RE.match(line):
            steps.append((m["title"], []))
        elif steps and (c := _CHUNK_RE.match(line)) and c["text"] != "(citado acima)":
            steps[-1][1].append((c["id"], c["text"], (c["source"] or "").strip()))
    return steps


def _first_sentence(text: str) -> str:
    sentence = _SENTENCE_RE.split(text.strip(), maxsplit=1)[0]
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def ontology_answer(system_prompt: str) -> str | None:
    steps = ontology_steps(system_prompt)
    main = [(t, c) for t, c in steps if t != SUPPORT_TITLE and c]
    if not main:
        main = [(t, c) for t, c in steps if c][:2]
    if not main:
        return None
    used: list[str] = []
    sources: list[str] = []
    sentences = []
    for title, chunks in main:
        fresh = next(((cid, text, src) for cid, text, src in chunks if cid not in used), None)
        if fresh is None:
            continue
        cid, text, src = fresh
        used.append(cid)
        if src and src not in sources:
            sources.append(src)
        opener = CONNECTORS.get(title, f"{title}:")
        sentences.append(f"{opener} {_first_sentence(text)} [{cid}]")
    prose = " ".join(sentences)
    if sources:
        prose += "\n\nFontes: " + "; ".join(sources)
    return prose
