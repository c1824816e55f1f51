"""Multi-part messages: "Qual o prazo do Sanger e como envio a amostra?".

A message is split at sentence ends ('?', '!', ';', new lines) and at
coordinating conjunctions (pt "e", "e também", "além disso"; en "and",
"also"; es "y", "además") — but only where both sides keep at least
``MIN_PART_TERMS`` content terms, so "preço e prazo" or "Sanger and qPCR"
stay one part and a part is never a lone word — unless the conjunction opens
a new question ("… e qual o prazo?", "… and how do I …", "… y cuándo …"):
then one content term on each side is enough.
"""

from __future__ import annotations

import re

from common.text import analyze

MIN_PART_TERMS = 2
MAX_PARTS = 4

_SENTENCE_RE = re.compile(r"[?!;\n]+|(?<=[^\d\s])\.(?=\s|$)")
_CONJUNCTION_RE = re.compile(
    r"\s*,?\s+(?:e\s+também|e\s+tambem|além\s+disso|alem\s+disso|e|and\s+also|and|also|"
    r"y\s+también|y\s+tambien|además|ademas|y|e\s+ainda)\s+",
    re.IGNORECASE,
)


# A conjunction followed by one of these starts a second question.
_QUESTION_WORDS = frozenset(
    "qual quais como quanto quanta quantos quantas quando onde porque por que o que "
    "what which how when where why who "
    "cual cuales cuál cuáles cómo cuánto cuánta cuántos cuántas cuándo dónde donde qué".split()
)


def _opens_question(piece: str) -> bool:
    words = piece.lower().split()
    return bool(words) and (words[0] in _QUESTION_WORDS or " ".join(words[:2]) in _QUESTION_WORDS)


def _split_conjunctions(sentence: str) -> list[str]:
    pieces = [p for p in _CONJUNCTION_RE.split(sentence) if p and p.strip()]
    if len(pieces) <= 1:
        return [sentence.strip()] if sentence.strip() else []
    # Merge pieces until both sides of a split have enough content terms.
    parts: list[str] = []
    current = pieces[0].strip()
    for piece in pieces[1:]:
        piece = piece.strip()
        needed = 1 if _opens_question(piece) else MIN_PART_TERMS
        if len(analyze(current)) >= needed and len(analyze(piece)) >= needed:
            parts.append(current)
            current = piece
        else:
            current = f"{current} e {piece}"
    parts.append(current)
    return parts


def split_parts(message: str, max_parts: int = MAX_PARTS) -> list[str]:
    """The message's parts in order; a one-question message is one part."""
    message = (message or "").strip()
    if not message:
        return []
    parts: list[str] = []
    for sentence in _SENTENCE_RE.split(message):
        for part in _split_conjunctions(sentence):
            if not analyze(part):
                # A content-free fragment ("Obrigado!") joins its neighbour.
                if parts:
                    parts[-1] = f"{parts[-1]} {part}"
                continue
            parts.append(part)
    if not parts:
        return [message]
    if len(parts) > max_parts:
        parts = parts[: max_parts - 1] + [" ".join(parts[max_parts - 1 :])]
    return parts
