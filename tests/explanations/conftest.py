"""Fixtures for the explanation step: the scripted OpenAI-compatible server
(tests/support/llm_server.py, a real local socket) wired to the LLM settings,
and the T-317 payroll result (seed 003) as an API payload."""

import json

import pytest

from config.celery import app as celery_app


@pytest.fixture
def llm(settings, llm_server):
    """Point the explanation step at the scripted server (one behaviour per request)."""
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_MODEL = "scripted-model"
    settings.LLM_MAX_RETRIES = 1
    settings.EXPLANATION_LLM_TIMEOUT = 2.0
    return llm_server


# The seed's example (T-317): a payroll simulation for March 2026 across stores.
PAYROLL_RESULT = {
    "result_id": "sim-2026-03-0001",
    "verdict": "Simulação viável: o custo simulado fica dentro do orçamento",
    "period": "2026-03",
    "totals": {
        "simulado": "1234567.89",
        "baseline": "1205000.00",
        "diferenca": "29567.89",
        "diferenca_pct": "0.0245",
    },
    "breakdowns": {
        "loja": {"0423": "18000.00", "0107": "11567.89"},
        "matricula": {"884213": "5234.11", "771902": "4987.65"},
    },
    "budget": "1250000.00",
    "rule": {
        "core": "O custo da folha não pode passar do orçamento da competência.",
        "specifics": "Reajuste de 3,5% para quem ganha até R$ 5 mil.",
        "numbers": [],
    },
    "pii_keys": ["matricula"],
}

VERIFIED_NARRATIVE = (
    "Na competência de março de 2026, o custo simulado foi de R$ 1.234.567,89, "
    "2,45% acima do baseline, e ficou dentro do orçamento. A maior parte do aumento "
    "veio da loja 0423, que somou R$ 18.000,00."
)
# 18000 / 29567.89 = 60.88%: a share the model computed, which nobody gave it.
REJECTED_NARRATIVE = (
    "Na competência de março de 2026, o custo simulado foi de R$ 1.234.567,89. "
    "A loja 0423 respondeu por 60,88% da diferença."
)
PII_VALUES = ["884213", "771902", "5.234,11", "4.987,65", "5234.11", "4987.65"]


@pytest.fixture
def payroll_payload():
    return json.loads(json.dumps(PAYROLL_RESULT))


@pytest.fixture
def real_broker():
    """Publish to the real Redis broker (TEST_REDIS_URL) instead of running eagerly."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False
    yield celery_app
    celery_app.conf.task_always_eager = previous
