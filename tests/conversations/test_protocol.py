"""The reply contract parser: pure, no database."""

import pytest

from common.identifiers import requested_package_key
from conversations.protocol import parse_agent_reply


def test_answer_object_is_an_answer():
    reply = parse_agent_reply('{"s": 0, "message": "Olá!"}')
    assert (reply.kind, reply.message) == ("answer", "Olá!")


def test_plain_text_is_an_answer():
    reply = parse_agent_reply("  O prazo é de 10 dias úteis.  ")
    assert (reply.kind, reply.message) == ("answer", "O prazo é de 10 dias úteis.")


def test_fetch_keeps_the_requested_id():
    reply = parse_agent_reply('{"s":99,"context_needed":"SAMPLE_INSTRUCTIONS"}')
    assert reply.kind == "fetch"
    assert reply.fetch_target == "SAMPLE_INSTRUCTIONS"
    assert reply.fetch_problem == ""


def test_fetch_of_a_procedure_keeps_the_prefix():
    reply = parse_agent_reply('{"s":99,"context_needed":"::quote-request"}')
    assert reply.fetch_target == "::quote-request"
    assert requested_package_key(reply.fetch_target) == "QUOTE_REQUEST"
    assert requested_package_key("PRECOS") == "PRECOS"


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"s": 99}', "missing"),
        ('{"s": 99, "context_needed": ""}', "empty"),
        ('{"s": 99, "context_needed": "   "}', "empty"),
        ('{"s": 99, "context_needed": "::"}', "empty"),
        ('{"s": 99, "context_needed": 42}', "not_string"),
        ('{"s": 99, "context_needed": ["A", "B"]}', "not_string"),
        ('{"s": 99, "context_needed": null}', "not_string"),
    ],
)
def test_unusable_fetches_are_reported_not_guessed(text, problem):
    reply = parse_agent_reply(text)
    assert reply.kind == "fetch"
    assert reply.fetch_problem == problem


def test_handoff_carries_its_reason():
    reply = parse_agent_reply('{"s": 90, "reason": "cliente pediu um humano"}')
    assert (reply.kind, reply.reason) == ("handoff", "cliente pediu um humano")
    assert parse_agent_reply('{"s": 90}').reason == ""


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"s": 99, "context_needed": "PRECOS"}\n```',
        '```\n{"s": 99, "context_needed": "PRECOS"}\n```',
        'Vou buscar o pacote.\n```json\n{"s": 99, "context_needed": "PRECOS"}\n```',
    ],
)
def test_fenced_json_is_tolerated(text):
    reply = parse_agent_reply(text)
    assert reply.kind == "fetch"
    assert reply.fetch_target == "PRECOS"


def test_status_as_string_digits_is_accepted():
    assert parse_agent_reply('{"s": "99", "context_needed": "X"}').kind == "fetch"


@pytest.mark.parametrize(
    "text, error",
    [
        ('{"s": 99, "context_needed": "PRECOS"', "unparseable_json"),
        ("```json\n{not json}\n```", "unparseable_json"),
        ('{"message": "sem status"}', "missing_status"),
        ('{"s": true, "message": "x"}', "bad_status"),
        ('{"s": 7, "message": "x"}', "unknown_status"),
        ('{"s": 0}', "missing_message"),
        ('{"s": 0, "message": "  "}', "missing_message"),
        ("[1, 2, 3]", "not_an_object"),
        ("", "empty_reply"),
    ],
)
def test_json_looking_but_unusable_replies_are_invalid(text, error):
    reply = parse_agent_reply(text)
    assert (reply.kind, reply.error) == ("invalid", error)


def test_prose_with_braces_is_still_an_answer():
    reply = parse_agent_reply("Use o formato {nome} no campo.")
    assert reply.kind == "answer"


def test_fenced_code_sample_in_prose_is_an_answer():
    text = "Exemplo:\n```python\nprint('oi')\n```"
    assert parse_agent_reply(text).kind == "answer"
