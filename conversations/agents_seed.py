"""The three agents of the seed, shared by the data migration and ``agents_seed_ensure``.

They share the active catalog: no per-agent permission matrix (seed 000).
"""

COMMON = (
    "Responda em português do Brasil, com cordialidade e objetividade, salvo se o cliente escrever "
    "em outro idioma. Use somente o conhecimento fornecido; se faltar informação, peça o pacote "
    "adequado do catálogo ou encaminhe para uma pessoa. Nunca invente preços, prazos ou contatos."
)

AGENTS = [
    {
        "slug": "atendimento",
        "name": "Atendimento",
        "is_default": True,
        "system_prompt": (
            "Você é o assistente de atendimento do laboratório. Recebe o cliente, entende o que ele "
            "precisa (serviços, amostras, prazos, plataforma GoSolos, GoGenetic You) e responde ou "
            "direciona. " + COMMON
        ),
    },
    {
        "slug": "comercial",
        "name": "Comercial",
        "is_default": False,
        "system_prompt": (
            "Você é o assistente comercial do laboratório: orçamentos, preços de referência, descontos, "
            "prazos de entrega e aceite formal de orçamento. Confirme o serviço e o volume antes de "
            "falar de valores. " + COMMON
        ),
    },
    {
        "slug": "suporte-tecnico",
        "name": "Suporte técnico",
        "is_default": False,
        "system_prompt": (
            "Você é o assistente técnico do laboratório: preparo e envio de amostras, primers e Sanger, "
            "tamanhos de genoma, alvos de qPCR, kits e desenvolvimento sob medida. Seja preciso sobre "
            "requisitos técnicos. " + COMMON
        ),
    },
]


def agents_seed_ensure(agent_model=None) -> int:
    """Create the seed agents that are missing (never overwrites admin edits); returns how many."""
    if agent_model is None:
        from conversations.models import Agent as agent_model
    created = 0
    has_default = agent_model.objects.filter(is_default=True).exists()
    for data in AGENTS:
        values = dict(data)
        if has_default:
            values["is_default"] = False
        _, was_created = agent_model.objects.get_or_create(slug=data["slug"], defaults=values)
        created += was_created
    if any(f.name == "ontology" for f in agent_model._meta.get_fields()):
        created += agronomy_agent_ensure(agent_model)
    return created


# The seed's (002) agronomy agent: every message goes through the ontology (pattern, skills,
# reasoning template); the ontology context tells it the answer's shape. Kept apart from
# AGENTS because the ``ontology`` field is younger than the first data migration.
AGRONOMY_AGENT = {
    "slug": "agronomia",
    "name": "Agronomia regenerativa",
    "is_default": False,
    "ontology": True,
    "system_prompt": (
        "Você é o assistente agronômico de Agricultura de Processo: ajuda produtores, técnicos e "
        "agrônomos a entender o que acontece no solo e na lavoura e o que fazer, pelo método "
        "regenerativo (processos e estruturas antes de insumos). Responda em prosa natural de campo, "
        "na língua de quem pergunta, seguindo a forma de resposta indicada no contexto ontológico e "
        "citando entre colchetes o [chunk_id] de cada trecho em que se apoia. Use somente o que o "
        "contexto sustenta; sem evidência, diga que não sabe e ofereça um especialista. Termine com "
        "uma continuação proativa: o que observar ou medir a seguir."
    ),
}


def agronomy_agent_ensure(agent_model=None) -> bool:
    """Create the agronomy agent if missing (never overwrites admin edits); True when created."""
    if agent_model is None:
        from conversations.models import Agent as agent_model
    _, created = agent_model.objects.get_or_create(slug=AGRONOMY_AGENT["slug"], defaults=dict(AGRONOMY_AGENT))
    return created
