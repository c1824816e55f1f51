"""What the agent says at each step of an action, in pt, en and es (no model call)."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "no_capability": {
        "pt": "Não consigo alterar o campo {label} por aqui: nenhuma ação disponível faz isso.",
        "en": "I cannot change the {label} field here: no available action does that.",
        "es": "No puedo cambiar el campo {label} aquí: ninguna acción disponible lo hace.",
    },
    "several_capabilities": {
        "pt": "Há mais de uma forma de alterar o campo {label}: {choices}. Qual devo usar?",
        "en": "There is more than one way to change the {label} field: {choices}. Which one should I use?",
        "es": "Hay más de una forma de cambiar el campo {label}: {choices}. ¿Cuál uso?",
    },
    "role_not_allowed": {
        "pt": "Você não tem permissão para alterar o campo {label}.",
        "en": "You are not allowed to change the {label} field.",
        "es": "No tiene permiso para cambiar el campo {label}.",
    },
    "entity_missing": {
        "pt": "Selecione o registro cujo campo {label} devo alterar.",
        "en": "Select the record whose {label} field I should change.",
        "es": "Seleccione el registro cuyo campo {label} debo cambiar.",
    },
    "entity_forbidden": {
        "pt": "Você não tem acesso a esse registro.",
        "en": "You do not have access to that record.",
        "es": "No tiene acceso a ese registro.",
    },
    "capability_inactive": {
        "pt": "Essa ação não está mais disponível.",
        "en": "That action is no longer available.",
        "es": "Esa acción ya no está disponible.",
    },
    "preview_expired": {
        "pt": "A proposta de alterar o campo {label} expirou; peça de novo para ver uma nova.",
        "en": "The proposal to change the {label} field expired; ask again to get a new one.",
        "es": "La propuesta de cambiar el campo {label} expiró; pídala de nuevo.",
    },
    "preview": {
        "pt": "Vou alterar o campo {label} de {entity} de {before} para {after}. Confirma?",
        "en": "I will change the {label} field of {entity} from {before} to {after}. Do you confirm?",
        "es": "Voy a cambiar el campo {label} de {entity} de {before} a {after}. ¿Confirma?",
    },
    "preview_no_before": {
        "pt": "Vou alterar o campo {label} de {entity} para {after}. Confirma?",
        "en": "I will change the {label} field of {entity} to {after}. Do you confirm?",
        "es": "Voy a cambiar el campo {label} de {entity} a {after}. ¿Confirma?",
    },
    "verified": {
        "pt": "O campo {label} foi alterado para {value}.",
        "en": "The {label} field was changed to {value}.",
        "es": "El campo {label} se cambió a {value}.",
    },
    "applying": {
        "pt": "Aplicando a alteração do campo {label} para {after}…",
        "en": "Applying the change of the {label} field to {after}…",
        "es": "Aplicando el cambio del campo {label} a {after}…",
    },
    "failed_timeout": {
        "pt": "Não sei se o campo {label} foi alterado: o sistema não respondeu a tempo. A alteração não foi "
        "confirmada; um operador pode tentar de novo.",
        "en": "I do not know whether the {label} field was changed: the system did not answer in time. The change "
        "was not confirmed; an operator can retry it.",
        "es": "No sé si el campo {label} se cambió: el sistema no respondió a tiempo. El cambio no se confirmó; "
        "un operador puede reintentarlo.",
    },
    "failed_error": {
        "pt": "Não consegui alterar o campo {label}: o sistema recusou ou falhou. Nada foi confirmado; um operador "
        "pode tentar de novo.",
        "en": "I could not change the {label} field: the system refused or failed. Nothing was confirmed; an "
        "operator can retry it.",
        "es": "No pude cambiar el campo {label}: el sistema lo rechazó o falló. Nada se confirmó; un operador "
        "puede reintentarlo.",
    },
    "failed_mismatch": {
        "pt": "A alteração do campo {label} não foi concluída: o sistema mostra {observed}, e não {after}.",
        "en": "The change of the {label} field was not completed: the system shows {observed}, not {after}.",
        "es": "El cambio del campo {label} no se completó: el sistema muestra {observed}, no {after}.",
    },
    "unknown_value": {"pt": "um valor desconhecido", "en": "an unknown value", "es": "un valor desconocido"},
    "this_record": {"pt": "este registro", "en": "this record", "es": "este registro"},
}


def say(key: str, language: str, **values) -> str:
    texts = TEXTS[key]
    return texts.get(language, texts["pt"]).format(**values)
