"""Deterministic chunk classifier: proposes an ontology class and subclass for a text.

Stage 2 of the seed's ingestion pipeline. Rules are weighted cues over the normalized
text (noisy-or per class, as in the query-pattern classifier); the subclass is the one
of the winning class whose own cues match most. Curators confirm or correct the
proposal in the admin; the proposal and its confidence are stored with the chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from common.text import fold

from .text import mentions, normalize

CLASS_CUES: dict[str, list[tuple[str, float]]] = {
    "dosagem": [
        (r"\b\d+([.,]\d+)? ?(g|kg|t|l|ml)/ha\b", 0.7),
        (r"\b(dose|doses|dosagem|por semente|necessidade de calcario)\b", 0.6),
    ],
    "contraindicacao": [
        (r"^(nao (misturar|usar|aplicar)|evite|evitar)|\b(contraindica\w*|nao deve|em solo umido)\b", 0.65),
        (r"\b(risco|impedir|recompacta|destroi)\b", 0.3),
    ],
    "caso": [(r"\b(caso validado|relato de produtor|relato de|produtor em)\b", 0.75), (r"\bsacas?\b", 0.2)],
    "evidencia": [(r"\b(meta-?analise|ensaio|sintese de estudos|comparacao em|em media)\b", 0.7)],
    "indicador": [
        (
            r"\b(indicador\w*|teste (do|de)|contagem|medir|cronometrar|penetrometro|percentual de cobertura|bioanalise)\b",
            0.65,
        ),
        (r"\b(acompanhar|amostrar|meta acima)\b", 0.3),
    ],
    "conceito": [
        (r"\b(e o manejo|e a capacidade|conceito|principio|regra-mae|agricultura de processo:|define)\b", 0.8)
    ],
    "sintoma": [
        (
            r"\b(sintoma|aparecem|encontram-se|sinal de)\b|^(baixa nodulacao|compactacao|erosao em sulcos|amarelecimento|encrostamento|baixa atividade)",
            0.7,
        )
    ],
    "causa_provavel": [
        (r"\b(causa\w*|inibe|limitam|restringe|expoe|multiplica|deficiencia de|encharcamento temporario)\b", 0.55)
    ],
    "intervencao": [
        (
            r"\b(reinoculacao|correcao do perfil|suspender|contencao de erosao|descompactacao biologica com|diversificar raizes)\b",
            0.7,
        ),
        (r"\b(recompoe|restabelece|recuperam|liberando)\b", 0.3),
    ],
    "pratica": [
        (
            r"(de rotina|pratica|plantio direto de qualidade|rotacao de culturas:|integracao lavoura-pecuaria:|produzidos na fazenda|mix de plantas de cobertura:)",
            0.7,
        )
    ],
    "processo": [
        (
            r"\b(fixacao biologica de nitrogenio:|agregacao:|infiltracao:|ciclagem de nutrientes:|acidificacao:|decomposicao da palhada:)",
            0.7,
        )
    ],
    "estrutura": [
        (
            r"\b(microbiota do solo:|sistema radicular profundo:|porosidade funcional:|cobertura viva e palhada:|fertilidade quimica do perfil:)",
            0.7,
        )
    ],
    "agroecossistema": [
        (r"\b(o cerrado tem|no cerrado a chuva|nas areas agricolas da|no pampa)\b", 0.6),
        (r"\b(bioma|relevo|clima)\b", 0.3),
    ],
    "sistema_produtivo": [(r"\b(sucessao soja e milho|na integracao|entrelinha|sistema acumula)\b", 0.75)],
    "estagio_transicao": [(r"\b(anos? de transicao|transicao avancada|entre o terceiro e o quinto ano)\b", 0.8)],
    "perfil_produtor": [(r"\b(agricultura familiar|grandes areas|assistencia tecnica|mao de obra)\b", 0.6)],
}
SUBCLASS_CUES: dict[str, dict[str, str]] = {
    "intervencao": {
        "estrutural": r"descompact|terraco|porosidade|sulcos",
        "biologica": r"inocula|mix|raizes|microbiota",
        "quimica_corretiva": r"calagem|gessagem|calcario",
        "manejo": r"suspender|nitrogenio mineral",
    },
    "sintoma": {
        "planta": r"folhas|nodul|planta",
        "solo": r"compacta|erosao|crosta|sulcos",
        "biologico": r"minhoca|microbiota|hifas",
    },
    "causa_provavel": {
        "biologica": r"rizobio|nematoide|inocula",
        "quimica": r"acidez|aluminio|deficiencia",
        "fisica": r"compacta|encharca",
        "manejo": r"adubacao|descoberto",
    },
    "dosagem": {"biologico": r"inoculante|celulas", "corretivo": r"calcario|gesso", "nutriente": r"molibdenio|cobalto"},
    "contraindicacao": {
        "incompatibilidade": r"misturar",
        "momento_inadequado": r"umido|momento",
        "risco_ambiental": r"herbicida|residua",
    },
    "caso": {"caso_validado": r"caso validado", "relato_produtor": r"relato"},
    "evidencia": {"pesquisa": r"meta-?analise", "ensaio_campo": r"ensaio|comparacao", "sintese": r"sintese"},
    "indicador": {
        "laboratorio": r"materia organica|enzimat|bioanalise",
        "campo": r"teste|contar|penetrometro|corda|copo",
    },
    "processo": {
        "biologico": r"fixacao|decomposicao|ciclagem",
        "fisico": r"agregacao",
        "quimico": r"acidifica",
        "hidrico": r"infiltracao",
    },
    "estrutura": {"biologica": r"microbiota|radicular", "fisica": r"porosidade|cobertura", "quimica": r"fertilidade"},
    "pratica": {
        "biologica": r"inocula|bioinsumo",
        "integracao": r"integracao",
        "conservacionista": r"plantio direto|rotacao|cobertura",
    },
    "agroecossistema": {"bioma": r"bioma|cerrado tem|mata atlantica|pampa", "clima": r"chuva|clima"},
    "sistema_produtivo": {"graos": r"soja e milho|graos", "integracao": r"integracao", "perenes": r"cafe"},
    "estagio_transicao": {
        "transicao_inicial": r"dois primeiros anos",
        "transicao_intermediaria": r"terceiro e o quinto",
        "transicao_avancada": r"avancada",
    },
    "perfil_produtor": {"agricultura_familiar": r"familiar", "grande_produtor": r"grandes areas"},
    "conceito": {"principio": r"principio|regra", "definicao": r"e o manejo|e a capacidade|definicao"},
}
_COMPILED = {cls: [(re.compile(rx), w) for rx, w in cues] for cls, cues in CLASS_CUES.items()}


@dataclass(frozen=True)
class ClassProposal:
    class_id: str
    subclass: str
    confidence: float


def propose_class(text: str) -> ClassProposal:
    norm = " ".join(fold((text or "").lower()).split())
    scores: dict[str, float] = {}
    for cls, cues in _COMPILED.items():
        miss = 1.0
        for rx, w in cues:
            if rx.search(norm):
                miss *= 1.0 - w
        scores[cls] = 1.0 - miss
    if mentions("sintomas", normalize(text)):
        scores["sintoma"] = 1.0 - (1.0 - scores["sintoma"]) * 0.8
    order = list(CLASS_CUES)
    best = max(order, key=lambda c: (scores[c], -order.index(c)))
    if scores[best] == 0:
        best = "conceito"
    subclass = ""
    best_hits = 0
    for sub, rx in SUBCLASS_CUES.get(best, {}).items():
        hits = len(re.findall(rx, norm))
        if hits > best_hits:
            subclass, best_hits = sub, hits
    return ClassProposal(best, subclass, round(scores[best], 2))
