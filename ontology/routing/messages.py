"""User-facing texts of the interruptions, in pt, en and es."""

CLARIFY_SYMPTOM = {
    "pt": "Pode descrever o que está observando no campo: nas folhas, nas raízes ou no solo, e desde quando?",
    "en": "Could you describe what you are seeing in the field (leaves, roots or soil) and since when?",
    "es": "¿Puede describir lo que observa en el campo (hojas, raíces o suelo) y desde cuándo?",
}

DISAMBIGUATION = {
    "cor_folhas": {
        "pt": "Qual é a cor das folhas afetadas: verde-claro, amarelo nas folhas velhas ou nas novas, ou manchas?",
        "en": "What colour are the affected leaves: pale green, yellow on old or on new leaves, or spotted?",
        "es": "¿De qué color son las hojas afectadas: verde claro, amarillas las viejas o las nuevas, o manchadas?",
    },
    "idade_problema": {
        "pt": "Há quanto tempo o problema aparece: desde a emergência, só nesta safra ou há várias safras?",
        "en": "How long has the problem been there: since emergence, only this season or for several seasons?",
        "es": "¿Desde cuándo aparece el problema: desde la emergencia, solo esta campaña o varias campañas?",
    },
    "historico_recente": {
        "pt": "O que mudou recentemente na área: chuvas fortes, tráfego de máquinas, produtos aplicados ou troca de cultura?",
        "en": "What changed recently in the field: heavy rain, machinery traffic, products applied or a crop change?",
        "es": "¿Qué cambió recientemente en el lote: lluvias fuertes, tránsito de máquinas, productos aplicados o cambio de cultivo?",
    },
}

GUARDIAN = {
    "pt": "Esta situação exige acompanhamento especializado; vou encaminhar ao Agente Guardião.",
    "en": "This situation needs specialist follow-up; handing over to the Guardian agent.",
    "es": "Esta situación requiere seguimiento especializado; la derivo al Agente Guardián.",
}

RISK_CAVEAT = {
    "pt": "Atenção: doses, defensivos e decisões de plantio dependem de análise de solo e de avaliação técnica "
    "local; confirme com um agrônomo antes de aplicar. Posso encaminhar sua pergunta a um especialista.",
    "en": "Caution: doses, pesticides and planting decisions depend on a soil test and a local technical "
    "assessment; confirm with an agronomist before applying. I can escalate your question to a specialist.",
    "es": "Atención: dosis, plaguicidas y decisiones de siembra dependen del análisis de suelo y de una evaluación "
    "técnica local; confírmelo con un agrónomo antes de aplicar. Puedo derivar su pregunta a un especialista.",
}
