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

# one short clarifying question when the top two patterns are close: "do you want A or B?"
PATTERN_CHOICE = {
    "diagnosis": {
        "pt": "entender a causa de um problema na sua área",
        "en": "understand the cause of a problem in your field",
        "es": "entender la causa de un problema en su campo",
    },
    "recommendation": {
        "pt": "saber o que fazer (prática, manejo ou dose)",
        "en": "know what to do (practice, management or dose)",
        "es": "saber qué hacer (práctica, manejo o dosis)",
    },
    "concept": {
        "pt": "entender um conceito ou como um processo funciona",
        "en": "understand a concept or how a process works",
        "es": "entender un concepto o cómo funciona un proceso",
    },
    "comparison": {
        "pt": "comparar opções entre si",
        "en": "compare options with each other",
        "es": "comparar opciones entre sí",
    },
    "monitoring": {
        "pt": "saber como medir ou acompanhar um indicador",
        "en": "know how to measure or track an indicator",
        "es": "saber cómo medir o seguir un indicador",
    },
    "similar_cases": {
        "pt": "ver experiências de produtores que já fizeram isso",
        "en": "see experiences of farmers who have done it",
        "es": "ver experiencias de productores que ya lo hicieron",
    },
}
PATTERN_QUESTION = {
    "pt": "Para eu responder do jeito certo: você quer {a} ou {b}?",
    "en": "So I answer the right way: do you want to {a} or to {b}?",
    "es": "Para responder bien: ¿quiere {a} o {b}?",
}

# the short reasoning templates (data/patterns.yaml "templates"): step titles and intents
TEMPLATE_TITLES = {
    "situacao": {"pt": "Situação", "en": "Situation", "es": "Situación"},
    "opcoes": {"pt": "Opções", "en": "Options", "es": "Opciones"},
    "tradeoffs": {"pt": "Prós e contras", "en": "Trade-offs", "es": "Pros y contras"},
    "recomendacao": {
        "pt": "Recomendação com ressalva",
        "en": "Recommendation with caveat",
        "es": "Recomendación con salvedad",
    },
    "definicao": {"pt": "Definição", "en": "Definition", "es": "Definición"},
    "mecanismo": {"pt": "Como funciona", "en": "How it works", "es": "Cómo funciona"},
    "exemplo": {"pt": "Na prática", "en": "In practice", "es": "En la práctica"},
    "criterios": {"pt": "Evidências de cada opção", "en": "Evidence for each option", "es": "Evidencia de cada opción"},
    "ressalvas": {
        "pt": "Quando cada opção não serve",
        "en": "When each option does not fit",
        "es": "Cuándo no sirve cada opción",
    },
    "indicador": {"pt": "Indicador", "en": "Indicator", "es": "Indicador"},
    "leitura": {"pt": "Leitura", "en": "Reading", "es": "Lectura"},
    "acao": {"pt": "Ação conforme a leitura", "en": "Action by reading", "es": "Acción según la lectura"},
    "casos": {"pt": "Casos semelhantes", "en": "Similar cases", "es": "Casos similares"},
    "resultados": {"pt": "Resultados e evidências", "en": "Results and evidence", "es": "Resultados y evidencia"},
    "praticas": {"pt": "Práticas usadas", "en": "Practices used", "es": "Prácticas usadas"},
}
TEMPLATE_INTENTS = {
    "situacao": {
        "pt": "Em que situação e contexto está a área do produtor?",
        "en": "What situation and context is the farm in?",
        "es": "¿En qué situación y contexto está el campo?",
    },
    "opcoes": {
        "pt": "Quais intervenções e práticas respondem a essa situação?",
        "en": "Which interventions and practices answer this situation?",
        "es": "¿Qué intervenciones y prácticas responden a esta situación?",
    },
    "tradeoffs": {
        "pt": "Quais riscos, contraindicações e evidências pesam em cada opção?",
        "en": "Which risks, contraindications and evidence weigh on each option?",
        "es": "¿Qué riesgos, contraindicaciones y evidencias pesan en cada opción?",
    },
    "recomendacao": {
        "pt": "Qual opção recomendar, em que dose e como acompanhar, com que ressalva?",
        "en": "Which option to recommend, at what dose, how to follow it, with which caveat?",
        "es": "¿Qué opción recomendar, en qué dosis, cómo seguirla y con qué salvedad?",
    },
    "definicao": {
        "pt": "Qual é a definição ou o princípio?",
        "en": "What is the definition or principle?",
        "es": "¿Cuál es la definición o el principio?",
    },
    "mecanismo": {
        "pt": "Que processos e estruturas do solo estão envolvidos?",
        "en": "Which soil processes and structures are involved?",
        "es": "¿Qué procesos y estructuras del suelo intervienen?",
    },
    "exemplo": {
        "pt": "Que prática ou caso mostra isso no campo?",
        "en": "Which practice or case shows it in the field?",
        "es": "¿Qué práctica o caso lo muestra en el campo?",
    },
    "criterios": {
        "pt": "O que os ensaios e casos mostram de cada opção?",
        "en": "What do trials and cases show for each option?",
        "es": "¿Qué muestran los ensayos y casos de cada opción?",
    },
    "ressalvas": {
        "pt": "Em que contexto ou momento cada opção é contraindicada?",
        "en": "In which context or moment is each option contraindicated?",
        "es": "¿En qué contexto o momento está contraindicada cada opción?",
    },
    "indicador": {
        "pt": "Que indicador acompanha esse processo?",
        "en": "Which indicator tracks this process?",
        "es": "¿Qué indicador sigue este proceso?",
    },
    "leitura": {
        "pt": "Como ler o indicador e o que ele revela sobre o processo?",
        "en": "How to read the indicator and what does it reveal about the process?",
        "es": "¿Cómo leer el indicador y qué revela del proceso?",
    },
    "acao": {
        "pt": "O que fazer conforme a leitura do indicador?",
        "en": "What to do depending on the reading?",
        "es": "¿Qué hacer según la lectura?",
    },
    "casos": {
        "pt": "Que produtores em contexto parecido já fizeram isso?",
        "en": "Which farmers in a similar context have done it?",
        "es": "¿Qué productores en un contexto parecido ya lo hicieron?",
    },
    "resultados": {
        "pt": "Que resultados e indicadores esses casos mostraram?",
        "en": "Which results and indicators did these cases show?",
        "es": "¿Qué resultados e indicadores mostraron estos casos?",
    },
    "praticas": {
        "pt": "Que práticas e intervenções eles usaram?",
        "en": "Which practices and interventions did they use?",
        "es": "¿Qué prácticas e intervenciones usaron?",
    },
}
