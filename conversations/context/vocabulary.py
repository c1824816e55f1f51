"""Words the reference resolver knows, per language (pt, en, es).

All phrases are written *folded* (lowercase, no accents): the resolver folds
the message the same way, so "Aquí", "aqui" and "AQUI" are one phrase.
Longer phrases win over their prefixes ("este registro" over "este",
"aqui embaixo" over "aqui").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FOCUS = "focus"
SELECTION = "selection"
PAGE = "page"
TAB = "tab"
VIEWPORT_TOP = "viewport_top"
VIEWPORT_BOTTOM = "viewport_bottom"
OTHER = "other"  # "o outro": the visible element that is not the focus

# Grammatical case the phrase carried, so a replacement keeps the sentence right:
# "disso" → "do campo X", "nisso" → "no campo X", "de esto" → "del campo X".
PLAIN, OF, IN = "plain", "of", "in"


@dataclass(frozen=True)
class Deictic:
    kind: str
    language: str | None  # None: shared by pt and es
    case: str = PLAIN


def _entries(kind, language, plain=(), of=(), in_=()):
    out = {}
    for words, case in ((plain, PLAIN), (of, OF), (in_, IN)):
        for phrase in words:
            out[phrase] = Deictic(kind, language, case)
    return out


DEICTICS: dict[str, Deictic] = {}
for table in (
    # Portuguese
    _entries(
        FOCUS,
        "pt",
        plain=(
            "isso",
            "isto",
            "esse campo",
            "este campo",
            "essa coluna",
            "esse item",
            "esse valor",
            "este valor",
            "essa opcao",
            "esse botao",
            "essa tabela",
        ),
        of=("disso", "disto", "desse campo", "deste campo", "desse item", "desse valor", "deste valor"),
        in_=("nisso", "nisto", "nesse campo", "neste campo", "nesse item"),
    ),
    _entries(
        SELECTION,
        "pt",
        plain=("este registro", "esse registro", "este", "esta linha", "essa linha", "este item"),
        of=("deste registro", "desse registro", "deste", "desta linha"),
        in_=("neste registro", "nesse registro", "neste", "nesta linha"),
    ),
    _entries(
        PAGE,
        "pt",
        plain=("esta pagina", "esta tela", "essa pagina", "essa tela"),
        of=("desta pagina", "desta tela", "dessa pagina", "dessa tela"),
        in_=("aqui", "nesta pagina", "nesta tela", "nessa pagina", "nessa tela"),
    ),
    _entries(TAB, "pt", plain=("esta aba", "essa aba"), of=("desta aba", "dessa aba"), in_=("nesta aba", "nessa aba")),
    _entries(VIEWPORT_TOP, "pt", plain=("acima", "aqui em cima", "la em cima", "em cima", "o de cima")),
    _entries(VIEWPORT_BOTTOM, "pt", plain=("abaixo", "embaixo", "aqui embaixo", "la embaixo", "o de baixo")),
    _entries(
        OTHER,
        "pt",
        plain=("o outro", "a outra", "o outro campo"),
        of=("do outro", "da outra", "do outro campo"),
        in_=("no outro", "na outra", "no outro campo"),
    ),
    # English
    _entries(
        FOCUS,
        "en",
        plain=(
            "this",
            "that",
            "this field",
            "that field",
            "this value",
            "this one",
            "this item",
            "this button",
            "this table",
            "this column",
        ),
    ),
    _entries(SELECTION, "en", plain=("this record", "that record", "this row", "this entry", "the selected record")),
    _entries(PAGE, "en", plain=("this page", "this screen"), in_=("here", "on this page", "on this screen")),
    _entries(TAB, "en", plain=("this tab",), in_=("on this tab", "in this tab")),
    _entries(VIEWPORT_TOP, "en", plain=("above", "up there", "at the top")),
    _entries(VIEWPORT_BOTTOM, "en", plain=("below", "down here", "at the bottom")),
    _entries(OTHER, "en", plain=("the other one", "the other", "the other field")),
    # Spanish ("este registro", "este campo", "aqui" are shared with pt: listed once above)
    _entries(
        FOCUS,
        "es",
        plain=("esto", "eso", "ese campo", "ese valor", "ese elemento", "este elemento"),
        of=("de esto", "de eso", "de este campo", "de ese campo"),
        in_=("en esto", "en eso", "en este campo", "en ese campo"),
    ),
    _entries(
        SELECTION,
        "es",
        plain=("ese registro", "esta fila", "esa fila"),
        of=("de este registro", "de ese registro", "de esta fila"),
        in_=("en este registro", "en ese registro", "en esta fila"),
    ),
    _entries(
        PAGE,
        "es",
        plain=("esta pantalla",),
        of=("de esta pagina", "de esta pantalla"),
        in_=("aca", "en esta pagina", "en esta pantalla"),
    ),
    _entries(TAB, "es", plain=("esta pestana", "esa pestana"), in_=("en esta pestana",)),
    _entries(VIEWPORT_TOP, "es", plain=("arriba", "aqui arriba", "de arriba")),
    _entries(VIEWPORT_BOTTOM, "es", plain=("abajo", "aqui abajo", "de abajo")),
    _entries(OTHER, "es", plain=("el otro", "la otra", "el otro campo"), of=("del otro", "de la otra")),
):
    for phrase, entry in table.items():
        # Shared phrases ("este registro" is pt and es) keep the first language seen
        # but lose their language vote.
        if phrase in DEICTICS and DEICTICS[phrase].language != entry.language:
            DEICTICS[phrase] = Deictic(entry.kind, None, DEICTICS[phrase].case)
        else:
            DEICTICS.setdefault(phrase, entry)

for shared in ("este registro", "este campo", "aqui", "esta pagina", "este"):
    DEICTICS[shared] = Deictic(DEICTICS[shared].kind, None, DEICTICS[shared].case)

# Words that vote for a language when the deictics alone do not decide it.
LANGUAGE_WORDS: dict[str, frozenset[str]] = {
    "pt": frozenset(
        "o os um uma do da dos das no na voce explique explica-me qual quais nao sao isso isto esse essa "
        "altere mude troque defina atualize campo aba significa serve esta tela pagina registro para "
        "de com por que e me favor como onde quando posso fazer pode tem devo quero preciso".split()
    ),
    "en": frozenset(
        "the a an of is are what why how this that explain change set update field tab record page "
        "please does do mean means to for here value which where when".split()
    ),
    "es": frozenset(
        "el los la las un una del al que es son esto eso ese explica explicame explique cambia cambie "
        "cambiar campo pestana significa pantalla registro para de por favor como donde cuando cual "
        "puedo hacer puede hay tengo debo quiero necesito".split()
    ),
}
# Distinctive words count double (the rest are shared with a neighbour language).
DISTINCTIVE_WORDS: dict[str, frozenset[str]] = {
    "pt": frozenset(
        "voce explique isso isto nao sao o os do da dos das no na um aba altere mude qual quais posso fazer".split()
    ),
    "en": frozenset("the what why how this that explain change field tab record page does mean please".split()),
    "es": frozenset(
        "el del al esto eso ese explica explicame cambia cambie pestana pantalla cual puedo hacer hay".split()
    ),
}

UPDATE_VERBS: dict[str, str] = {
    verb: lang
    for lang, verbs in (
        (
            "pt",
            "altere alterar altera mude mudar muda troque trocar troca defina definir coloque colocar "
            "atualize atualizar ajuste ajustar",
        ),
        ("en", "change set update make"),
        (
            "es",
            "cambia cambie cambiar modifica modifique modificar actualiza actualice actualizar "
            "pon ponga poner establece establezca",
        ),
    )
    for verb in verbs.split()
}

EXPLAIN_WORDS = frozenset(
    "explique explica explicar explain explicame significa significado mean means meaning "
    "serve sirve o-que what que".split()
)

UNITS: dict[str, str] = {}
for unit, words in (
    ("days", "dia dias day days"),
    ("hours", "hora horas hour hours h"),
    ("minutes", "minuto minutos minute minutes min"),
    ("weeks", "semana semanas week weeks"),
    ("months", "mes meses month months"),
    ("years", "ano anos year years"),
    ("percent", "% porcento percent por-cento por-ciento"),
):
    for word in words.split():
        UNITS[word] = unit

# Phrases saying the question is about the focused field's current value.
VALUE_PHRASES = (
    "valor",
    "preenchid",
    "esta correto",
    "esta certo",
    "esta errado",
    "quanto",
    "value",
    "filled",
    "correct",
    "how much",
    "how many",
    "is it right",
    "wrong",
    "cuanto",
    "es correcto",
    "esta bien",
)
# Interrogatives that, followed by the target's name, ask for its value ("Qual é a validade?").
VALUE_INTERROGATIVES = ("qual e", "qual o", "qual a", "quais sao", "what is", "what's", "cual es", "cuales son")

# Nouns per element type: (article, noun) — pt and es with gender.
NOUNS: dict[str, dict[str, tuple[str, str]]] = {
    "pt": {
        "field": ("o", "campo"),
        "tab": ("a", "aba"),
        "table": ("a", "tabela"),
        "button": ("o", "botão"),
        "section": ("a", "seção"),
        "component": ("o", "componente"),
        "row": ("a", "linha"),
        "cell": ("a", "célula"),
        "menu": ("o", "menu"),
        "page": ("a", "página"),
        "record": ("o", "registro"),
        None: ("o", "item"),
    },
    "es": {
        "field": ("el", "campo"),
        "tab": ("la", "pestaña"),
        "table": ("la", "tabla"),
        "button": ("el", "botón"),
        "section": ("la", "sección"),
        "component": ("el", "componente"),
        "row": ("la", "fila"),
        "cell": ("la", "celda"),
        "menu": ("el", "menú"),
        "page": ("la", "página"),
        "record": ("el", "registro"),
        None: ("el", "elemento"),
    },
    "en": {
        "field": ("the", "field"),
        "tab": ("the", "tab"),
        "table": ("the", "table"),
        "button": ("the", "button"),
        "section": ("the", "section"),
        "component": ("the", "component"),
        "row": ("the", "row"),
        "cell": ("the", "cell"),
        "menu": ("the", "menu"),
        "page": ("the", "page"),
        "record": ("the", "record"),
        None: ("the", "item"),
    },
}

# Article contractions: (language, preposition case, article) → form.
CONTRACTIONS = {
    ("pt", OF, "o"): "do",
    ("pt", OF, "a"): "da",
    ("pt", IN, "o"): "no",
    ("pt", IN, "a"): "na",
    ("pt", "to", "o"): "ao",
    ("pt", "to", "a"): "à",
    ("es", OF, "el"): "del",
    ("es", OF, "la"): "de la",
    ("es", IN, "el"): "en el",
    ("es", IN, "la"): "en la",
    ("es", "to", "el"): "al",
    ("es", "to", "la"): "a la",
    ("en", OF, "the"): "of the",
    ("en", IN, "the"): "in the",
    ("en", "to", "the"): "the",
}

CLARIFY_TEMPLATES = {
    # (language, action) → template with {options}
    ("pt", "explain"): "Você quer que eu explique {options}?",
    ("pt", "update"): "Você quer que eu altere {options}?",
    ("pt", "refer"): "Você está se referindo {options}?",
    ("en", "explain"): "Do you want me to explain {options}?",
    ("en", "update"): "Do you want me to change {options}?",
    ("en", "refer"): "Do you mean {options}?",
    ("es", "explain"): "¿Quieres que explique {options}?",
    ("es", "update"): "¿Quieres que cambie {options}?",
    ("es", "refer"): "¿Te refieres {options}?",
}
OR_WORD = {"pt": "ou", "en": "or", "es": "o"}

RECORD_CHANGED = {
    "pt": "O registro selecionado mudou de {old} para {new}; esta resposta considera somente {new}.",
    "en": "The selected record changed from {old} to {new}; this answer considers {new} only.",
    "es": "El registro seleccionado cambió de {old} a {new}; esta respuesta considera solo {new}.",
}
RECORD_CLEARED = {
    "pt": "O registro {old} não está mais selecionado; esta resposta não o considera.",
    "en": "Record {old} is no longer selected; this answer does not consider it.",
    "es": "El registro {old} ya no está seleccionado; esta respuesta no lo considera.",
}

# Deictics that are also determiners: "este" alone is the record, "este
# equipamento" keeps its noun. Followed by one of PRONOUN_FOLLOWERS (a verb) or
# by punctuation they are pronouns and are replaced in the rewrite.
DETERMINERS = frozenset({"este", "deste", "neste", "this"})
PRONOUN_FOLLOWERS = frozenset(
    "e eh esta foi era tem pode significa serve quer vale "  # pt (folded: é → e, está → esta)
    "is was means mean does do stands refers has can "  # en
    "es fue significa sirve tiene puede quiere "  # es
    # Prepositions: "Change this to 30 days" — no noun follows, "this" is the pronoun.
    "para por com como "  # pt
    "to for into from with as by "  # en
    "a con".split()  # es
)

# "<article> <noun>" right before acima/abaixo ("o campo abaixo", "the field below", "el campo
# de abajo"): one reference with the positional word, replaced whole in the rewrite.
POSITIONAL_NOUN_PHRASE = re.compile(r"\b(?:o|a|the|el|la|lo)\s+(?:campo|item|valor|linha|field|value|row|one|fila)\s+$")
