"""Who a cited number is said of, and which way a described change goes.

Pure Python. `Meaning` describes a result's facts for this purpose (built by
`explanations.prompts.result_meaning`): the entities numbers belong to and
the pt words that name them, and the sign of each difference a narrative may
describe. `judge` runs after the value/kind match and returns the numbers
that are said of the wrong entity or in the wrong direction, and PII names.

Deliberately narrow, to avoid rejecting good narratives: a number is tied to
an entity only when the entity is named right before it through a few
linking words ("a filial Centro respondeu por R$ 7.200,00", "o orçamento de
R$ X") or right after it ("R$ 7.200,00 da filial Norte"); a direction is
checked only when the clause says what it is compared with, or cites a
difference whose sign is known.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from common.text import fold_aligned
from explanations.numbers.types import PII, WRONG_DIRECTION, WRONG_ENTITY, CitedNumber
from explanations.numbers.vocabulary import CODE_NOUNS

BASELINE, BUDGET, TARGET = "baseline", "budget", "target"


# common.text.fold_aligned, character by character, as one translation table for the characters
# narratives are written in (computed from it, so the two cannot disagree); others take the slow path.
_FOLD_LIMIT = "\u2fff"


@functools.cache
def _fold_table() -> dict[int, str]:
    return {code: fold_aligned(chr(code)) for code in range(ord(_FOLD_LIMIT) + 1)}  # built on first use


def fold(text: str) -> str:
    """Lower case without accents, same length as the text, so a mention found in the
    folded text is a span of the original."""
    if not text or max(text) <= _FOLD_LIMIT:
        return text.translate(_fold_table())
    return fold_aligned(text)


@dataclass(frozen=True)
class Entity:
    key: str  # "budget", "totals.simulado", "filial.Centro", "counts.lojas"
    labels: tuple[str, ...]  # folded words that name it
    pii: bool = False


@dataclass(frozen=True)
class Meaning:
    entities: tuple[Entity, ...] = ()
    # Sign of (main total − reference) for "baseline", "budget", "target".
    signs: Mapping[str, int] = field(default_factory=dict)
    # Folded words naming each reference ("orcamento", "teto" for budget).
    references: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Entities whose values are signed differences (their sign is a direction).
    differences: frozenset[str] = frozenset()
    # Breakdown entities (a part: a claim about it is not about the total).
    parts: frozenset[str] = frozenset()
    pii_values: frozenset[Decimal] = frozenset()
    # Folded nouns of breakdown dimensions ("filial"): "R$ 7.200,00 da filial Norte".
    nouns: frozenset[str] = frozenset()
    # Facts the result names but does not have (target null): nothing may be said of them.
    absent: frozenset[str] = frozenset()
    # The entities each reference is ("budget" → {"budget"}, "baseline" → {"totals.baseline"}).
    reference_entities: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def __hash__(self):
        return id(self)


# Words that may stand between an entity and the number said of it.
_BEFORE_LINKS = frozenset("""
de do da dos das foi foram e era eram ficou ficaram fica ficam em com por respondeu responderam responde
respondem somou somaram soma somam totalizou totalizaram totaliza registrou registraram registra teve tiveram
tem tinha apresentou apresentaram chegou chegaram a o os as ao aos atingiu atingiram alcancou alcancaram valor
total custo custou fixado fixada definido definida previsto prevista estimado estimada mensal anual se situou
manteve esta estava ser sendo corresponde correspondeu representa representou contribuiu contribuiram gasto
gastou igual equivalente apenas somente so cerca exatamente marcou marcaram
""".split())  # fmt: skip
_AFTER_LINKS = frozenset("""
de do da dos das na no nas nos em pela pelo para a o ao referente relativo
""".split())  # fmt: skip
# Verbs that may open the link after the number ("R$ 7.200,00 vieram da filial Norte").
_AFTER_VERBS = frozenset("""
veio vieram vem vindo vindos proveniente provenientes gerado gerados gasto gastos pago pagos registrado
registrados atribuido atribuidos concentrado concentrados referentes relativos coube couberam
""".split())  # fmt: skip
# After one of these the entity is what something is compared with, not whose value follows
# ("superou o orçamento em R$ 15 mil": the amount is the excess).
_COMPARISONS = frozenset("""
acima abaixo superou superaram supera ultrapassou ultrapassaram ultrapassa excedeu excede estourou dentro que
relacao comparacao frente versus contra sobre ante
""".split())  # fmt: skip
_DIFFERENCE_AFTER = re.compile(r"\s*(acima|abaixo|a mais|a menos|alem)\b")
_WORD_RE = re.compile(r"[a-z0-9]+")
_SENTENCE_RE = re.compile(r"[.;!?](?=\s|$)|\n")

_UP = r"acima|superou|superaram|supera|superam|ultrapassou|ultrapassaram|ultrapassa|excedeu|excederam|excede|estourou|extrapolou|subiu|subiram|sobe|aumentou|aumentaram|aumento|alta|cresceu|cresceram|crescimento|elevou|elevacao|acrescimo|a mais|maior que|maior do que|mais caro"
_DOWN = r"abaixo|caiu|cairam|cai|queda|reduziu|reduziram|reducao|diminuiu|diminuiram|diminuicao|recuou|recuo|economia|a menos|menor que|menor do que|mais barato|retracao|encolheu|dentro"
_DIRECTION_RE = re.compile(rf"(?<![a-z0-9])(?:(?P<up>{_UP})|(?P<down>{_DOWN}))(?![a-z0-9])")
_NEGATION_RE = re.compile(r"(?<![a-z0-9])(nao|sem|nem|nunca)(?![a-z0-9])[^.;!?]{0,20}$")


@functools.lru_cache(maxsize=256)
def _label_index(entities: tuple[Entity, ...]) -> tuple[re.Pattern | None, dict[str, frozenset[str]]]:
    by_label: dict[str, set[str]] = {}
    for entity in entities:
        for label in entity.labels:
            if label:
                by_label.setdefault(label, set()).add(entity.key)
    if not by_label:
        return None, {}
    alternation = "|".join(re.escape(label) for label in sorted(by_label, key=len, reverse=True))
    pattern = re.compile(rf"(?<![a-z0-9])(?:{alternation})(?![a-z0-9])")
    return pattern, {label: frozenset(keys) for label, keys in by_label.items()}


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    keys: frozenset[str]


def _mentions(folded: str, meaning: Meaning) -> list[_Mention]:
    pattern, keys = _label_index(meaning.entities)
    if pattern is None:
        return []
    return [_Mention(m.start(), m.end(), keys[m.group()]) for m in pattern.finditer(folded)]


def _words(gap: str) -> list[str] | None:
    """The words of a gap, or None when punctuation other than "(" separates (a colon
    introduces a list: "concentraram o aumento: R$ 18.000,00 e R$ 11.567,89")."""
    if re.search(r"[^\w\s($]", gap):
        return None
    return _WORD_RE.findall(gap)


def _linked(folded: str, c: CitedNumber, mentions, ends, mention_starts, starts, nouns) -> frozenset[str]:
    """The entities the text says `c` belongs to (`starts`: of every cited number, sorted;
    `ends`, `mention_starts`: of the mentions)."""
    linked: set[str] = set()
    # Mentions are sorted and do not overlap: the last one ending before the number, the first after it.
    at = bisect.bisect_right(ends, c.start)
    if at and not _DIFFERENCE_AFTER.match(folded, c.end):
        m = mentions[at - 1]
        gap = folded[m.end : c.start]
        words = [] if gap.strip() == "," else _words(gap)  # "e a loja 0423, R$ 11.567,89"
        between = bisect.bisect_left(starts, m.end) < bisect.bisect_left(starts, c.start)
        if words is not None and len(words) <= 6 and not between:
            preceding = _WORD_RE.findall(folded[max(0, m.start - 30) : m.start])[-3:]
            compared = any(w in _COMPARISONS for w in preceding)
            allowed = {"de"} if compared else _BEFORE_LINKS
            if all(w in allowed for w in words):
                linked |= m.keys
    nxt = bisect.bisect_left(mention_starts, c.end)
    if nxt < len(mentions):
        m = mentions[nxt]
        words = _words(folded[c.end : m.start])
        if (
            words
            and len(words) <= 4
            and (words[0] in _AFTER_LINKS or (words[0] in _AFTER_VERBS and len(words) > 1))
            and all(w in _AFTER_LINKS or w in nouns or w in CODE_NOUNS for w in words[1:])
        ):
            linked |= m.keys
    return frozenset(linked)


# Count nouns that name the same things.
_NOUN_GROUPS = (
    {"loja", "filial", "filiai", "unidade", "agencia", "ponto"},
    {"funcionario", "colaborador", "empregado", "pessoa", "trabalhador", "servidor", "profissional", "headcount"},
)


def _noun_stem(word: str) -> str:
    word = fold(word)
    for suffix in ("oes", "aes", "ais", "eis", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return {
                "oes": word[:-3] + "ao",
                "aes": word[:-3] + "ao",
                "ais": word[:-3] + "al",
                "eis": word[:-3] + "el",
            }.get(suffix, word[: -len(suffix)])
    return word


def _same_noun(a: str, b: str) -> bool:
    a, b = _noun_stem(a), _noun_stem(b)
    if a == b or a.startswith(b) or b.startswith(a):
        return True
    return any(a in group and b in group for group in _NOUN_GROUPS)


def _attribution(folded, cited, matched, meaning, kinds_of, mentions) -> list[CitedNumber]:
    from explanations.numbers.check import compatible

    starts = sorted(c.start for c in cited)
    ends = [m.end for m in mentions]
    mention_starts = [m.start for m in mentions]
    labels = {e.key: e.labels for e in meaning.entities}
    wrong = []
    for index, c in enumerate(cited):
        found = matched.get(index)
        if not found:
            continue
        owners = {n.entity for n in found if n.entity}
        if not owners or len(owners) < len({n.entity for n in found}):
            continue  # also written in the verdict or the rule: not tied to one fact
        if c.kind == "code" or all(n.kind == "code" for n in found):
            continue  # a code names the entity itself ("as lojas 0423 e 0107")
        if c.noun and all(o.startswith("counts.") for o in owners):
            if not any(_same_noun(c.noun, label) for o in owners for label in labels.get(o, ()) or (o[7:],)):
                wrong.append(dataclasses.replace(c, reason=WRONG_ENTITY))
            continue
        # A mention inside the number itself ("0423" of "loja 0423") is never taken.
        linked = _linked(folded, c, mentions, ends, mention_starts, starts, meaning.nouns)
        relevant = {e for e in linked if e in meaning.absent or any(compatible(c.kind, k) for k in kinds_of.get(e, ()))}
        if relevant and not (owners & relevant):
            wrong.append(dataclasses.replace(c, reason=WRONG_ENTITY))
    return wrong


def _sentences(folded: str):
    start = 0
    for m in _SENTENCE_RE.finditer(folded):
        yield start, m.start()
        start = m.end()
    yield start, len(folded)


# Words that may stand between a comparison and what it compares with ("acima do baseline",
# "subiu R$ 29.567,89 em relação ao baseline"); the digits of a cited number are skipped.
_REFERENCE_GAP = frozenset("""
do da de dos das o a os as ao aos em relacao comparacao frente sobre que por cento pontos percentuais percentual
p pp r us mil milhao milhoes reais e ficou ficaram se manteve mantido comparado comparada ante contra versus vs com
""".split())  # fmt: skip


@functools.lru_cache(maxsize=256)
def _reference_index(references: tuple) -> tuple[re.Pattern | None, dict[str, str]]:
    by_word = {word: ref for ref, words in references for word in words if word}
    if not by_word:
        return None, {}
    alternation = "|".join(re.escape(w) for w in sorted(by_word, key=len, reverse=True))
    return re.compile(rf"(?<![a-z0-9])(?:{alternation})(?![a-z0-9])"), by_word


def _reference(folded: str, start: int, end: int, meaning: Meaning) -> str | None:
    """The reference a comparison word ending at `start` names right after it."""
    pattern, by_word = _reference_index(tuple((ref, tuple(words)) for ref, words in meaning.references.items()))
    if pattern is None:
        return None
    window = folded[start:end][:90]
    m = pattern.search(window)
    if m is None:
        return None
    gap = _WORD_RE.findall(_DIGITS_RE.sub(" ", window[: m.start()]))
    return by_word[m.group()] if len(gap) <= 8 and all(w in _REFERENCE_GAP for w in gap) else None


_DIGITS_RE = re.compile(r"\d+")


def _direction(folded, cited, matched, meaning, mentions) -> list[CitedNumber]:
    wrong = []
    found = list(_DIRECTION_RE.finditer(folded))
    if not found:
        return wrong
    sentences = list(_sentences(folded))
    sentence_ends = [end for _, end in sentences]
    cited_starts = [c.start for c in cited]  # extraction returns them in order
    for m in found:
        at = m.start()
        s_start, s_end = sentences[min(bisect.bisect_left(sentence_ends, at), len(sentences) - 1)]
        expected = 1 if m.group("up") else -1
        if _NEGATION_RE.search(folded[max(s_start, at - 24) : at]):
            expected = -expected
        inside = range(bisect.bisect_left(cited_starts, s_start), bisect.bisect_left(cited_starts, s_end))
        sign = None
        ref = _reference(folded, m.end(), s_end, meaning)
        if ref is not None:
            sign = meaning.signs.get(ref)
        else:
            differences = [
                (abs(cited[i].start - at), n.value)
                for i in inside
                for n in matched.get(i, ())
                if n.entity in meaning.differences and n.value != 0
            ]
            if differences:
                sign = 1 if min(differences, key=lambda d: d[0])[1] > 0 else -1
            else:
                if any(s_start <= x.start < s_end and x.keys & meaning.parts for x in mentions):
                    continue  # said of a part whose change is not given
                sign = meaning.signs.get(BASELINE)
        if not sign:
            continue
        if m.group("down") == "dentro" and expected < 0 and sign <= 0:
            continue
        if sign == expected:
            continue
        if inside:
            # The number the relation is claimed against ("superou o orçamento de R$ X"), else the
            # one right before the word ("1,80% maior que"), else the nearest after it, else before.
            owned = meaning.reference_entities.get(ref, frozenset()) if ref else frozenset()
            reference = [
                i for i in inside if cited[i].start > at and any(n.entity in owned for n in matched.get(i, ()))
            ]
            right_before = [i for i in inside if 0 <= at - cited[i].end <= 2]
            nearest = min(inside, key=lambda i: (cited[i].start < at, abs(cited[i].start - at)))
            target = cited[(reference or right_before or [nearest])[0]]
        else:
            word = m.group()
            target = CitedNumber(Decimal(0), "direction", at, at + len(word), word)
        wrong.append(dataclasses.replace(target, reason=WRONG_DIRECTION))
    return wrong


def _pii_mentions(text: str, meaning: Meaning, mentions: list[_Mention]) -> list[CitedNumber]:
    pii = [e for e in meaning.entities if e.pii]
    if not pii:
        return []
    found = []
    for mention in mentions:
        if any(e.key in mention.keys for e in pii):
            found.append(
                CitedNumber(
                    Decimal(0), "name", mention.start, mention.end, text[mention.start : mention.end], reason=PII
                )
            )
    return found


def judge(text: str, cited, matched: dict, meaning: Meaning, kinds_of: dict[str, set[str]]) -> list[CitedNumber]:
    """Numbers matched by value and kind but said of the wrong entity or in
    the wrong direction, and mentions of people (PII keys)."""
    folded = fold(text)
    mentions = _mentions(folded, meaning)
    wrong = _attribution(folded, cited, matched, meaning, kinds_of, mentions)
    already = {(c.start, c.end) for c in wrong}
    for c in _direction(folded, cited, matched, meaning, mentions):
        if (c.start, c.end) not in already:
            if c.kind == "direction":
                c = dataclasses.replace(c, text=text[c.start : c.end])
            wrong.append(c)
            already.add((c.start, c.end))
    wrong += _pii_mentions(text, meaning, mentions)
    return wrong
