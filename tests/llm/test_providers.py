"""LLM providers: the OpenAI-compatible client over a real local socket,
the replay script, the offline extractive provider and settings parsing."""

import json
import time

import pytest

from llm import (
    CatalogItem,
    ChatMessage,
    KnowledgeItem,
    LLMConfigError,
    LLMRequest,
    LLMSettings,
    OfflineProvider,
    OpenAICompatibleProvider,
    ProviderUnavailable,
    ReplayProvider,
    llm_settings_from_mapping,
)
from conversations.protocol import parse_agent_reply


def _request(user="Olá", system="Você é um assistente.", **kwargs):
    return LLMRequest(messages=(ChatMessage("system", system), ChatMessage("user", user)), **kwargs)


def _openai(llm_server, *, timeout=2.0, max_retries=0, api_key="sk-test"):
    settings = LLMSettings(
        provider="openai",
        base_url=llm_server.url,
        api_key=api_key,
        model="m-1",
        timeout=timeout,
        max_retries=max_retries,
    )
    return OpenAICompatibleProvider(settings, sleep=lambda s: None)


# -- openai over a real socket -------------------------------------------------


def test_openai_provider_returns_the_completion_text(llm_server):
    llm_server.reply_json({"s": 0, "message": "Olá!"})
    result = _openai(llm_server).complete(_request(user="Oi", options={"temperature": 0, "ignored": 1}))
    assert json.loads(result.text) == {"s": 0, "message": "Olá!"}
    assert result.attempts == 1
    sent = llm_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.body["model"] == "m-1"
    assert sent.body["temperature"] == 0
    assert "ignored" not in sent.body
    assert sent.system_prompt == "Você é um assistente."
    assert sent.user_text == "Oi"


def test_openai_provider_sends_no_auth_header_without_a_key(llm_server):
    llm_server.reply("oi")
    _openai(llm_server, api_key="").complete(_request())
    assert "authorization" not in llm_server.requests[0].headers


def test_openai_reply_after_the_timeout_is_unavailable(llm_server):
    llm_server.delay(1.0)
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server, timeout=0.2).complete(_request())
    assert exc.value.reason == "timeout"
    assert exc.value.attempts == 1


def test_openai_retries_a_timeout_then_succeeds(llm_server):
    llm_server.delay(1.0).reply("segunda tentativa")
    result = _openai(llm_server, timeout=0.2, max_retries=1).complete(_request())
    assert result.text == "segunda tentativa"
    assert result.attempts == 2


def test_openai_500_is_unavailable_after_retries(llm_server):
    llm_server.status(500).status(502)
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server, max_retries=1).complete(_request())
    assert exc.value.reason == "http_502"
    assert exc.value.attempts == 2
    assert len(llm_server.requests) == 2


def test_openai_client_error_is_not_retried(llm_server):
    llm_server.status(401, '{"error": "bad key"}')
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server, max_retries=3).complete(_request())
    assert exc.value.reason == "http_401"
    assert len(llm_server.requests) == 1


def test_openai_malformed_body_is_unavailable(llm_server):
    llm_server.malformed()
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server).complete(_request())
    assert exc.value.reason == "malformed_body"


def test_openai_body_without_message_content_is_malformed(llm_server):
    llm_server.malformed(b'{"choices": [{"message": {"role": "assistant", "content": null}}]}')
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server).complete(_request())
    assert exc.value.reason == "malformed_body"


def test_openai_empty_choices_is_unavailable(llm_server):
    llm_server.empty_choices()
    with pytest.raises(ProviderUnavailable) as exc:
        _openai(llm_server).complete(_request())
    assert exc.value.reason == "empty_choices"


def test_openai_connection_refused_is_unavailable(llm_server):
    url = llm_server.url
    llm_server.stop()
    settings = LLMSettings(provider="openai", base_url=url, model="m", timeout=0.5, max_retries=0)
    with pytest.raises(ProviderUnavailable) as exc:
        OpenAICompatibleProvider(settings).complete(_request())
    assert exc.value.reason in ("network", "timeout")


def test_openai_keeps_its_connection_between_calls(llm_server):
    llm_server.keep_alive = True
    llm_server.reply("um").reply("dois").status(500).reply("três")
    provider = _openai(llm_server, max_retries=1)
    assert provider.complete(_request()).text == "um"
    assert provider.complete(_request()).text == "dois"
    assert provider.complete(_request()).text == "três"  # after a 500, retried on the same connection
    assert provider.connections_opened == 1
    assert len({r.client_port for r in llm_server.requests}) == 1


def test_openai_sends_again_on_a_new_connection_when_the_kept_one_was_closed(llm_server):
    llm_server.keep_alive = True
    llm_server.reply_then_close("um").reply("dois")
    provider = _openai(llm_server, max_retries=0)
    assert provider.complete(_request()).text == "um"
    time.sleep(0.05)  # the server closes its side
    result = provider.complete(_request())
    assert (result.text, result.attempts) == ("dois", 1)  # not a retry: nothing reached the server
    assert provider.connections_opened == 2
    assert len(llm_server.requests) == 2


def test_openai_never_sends_again_for_free_a_request_the_server_may_have_acted_on(llm_server):
    # The kept connection is alive when the request leaves; the server reads it and drops the
    # connection without answering. A second send would be a second (billed) generation: only the
    # retry policy may send it again, counted as an attempt.
    llm_server.keep_alive = True
    llm_server.reply("um").drop_after_reading()
    provider = _openai(llm_server, max_retries=0)
    assert provider.complete(_request()).text == "um"
    with pytest.raises(ProviderUnavailable) as exc:
        provider.complete(_request())
    assert exc.value.reason == "network"
    assert len(llm_server.requests) == 2
    retrying = _openai(llm_server, max_retries=1)
    llm_server.drop_after_reading().reply("quatro")
    result = retrying.complete(_request())
    assert (result.text, result.attempts) == ("quatro", 2)
    assert len(llm_server.requests) == 4


def test_openai_without_keep_alive_opens_a_connection_per_call(llm_server):
    llm_server.reply("um").reply("dois")
    provider = _openai(llm_server)
    provider.complete(_request())
    provider.complete(_request())
    assert provider.connections_opened == 2


def test_openai_through_a_proxy_uses_urllib(llm_server, monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("no_proxy", raising=False)
    provider = _openai(llm_server)
    sent = []
    monkeypatch.setattr(provider, "_post_once_urllib", lambda payload: sent.append(payload) or b"")
    with pytest.raises(ProviderUnavailable):
        provider.complete(_request())
    assert sent and provider.connections_opened == 0


def test_scripted_server_callable_sees_the_request(llm_server):
    llm_server.call(lambda req: {"s": 0, "message": f"eco: {req.user_text}"})
    result = _openai(llm_server).complete(_request(user="ping"))
    assert parse_agent_reply(result.text).message == "eco: ping"


# -- replay ------------------------------------------------------------------


def test_replay_returns_scripted_replies_in_order_then_runs_out():
    provider = ReplayProvider.from_data(
        {"turns": [{"user": "x", "replies": [{"s": 99, "context_needed": "PRECOS"}, "texto livre"]}]}
    )
    assert parse_agent_reply(provider.complete(_request()).text).fetch_target == "PRECOS"
    assert provider.complete(_request()).text == "texto livre"
    with pytest.raises(ProviderUnavailable) as exc:
        provider.complete(_request())
    assert exc.value.reason == "replay_exhausted"


def test_replay_can_simulate_an_outage():
    provider = ReplayProvider.from_data({"replies": [{"provider_unavailable": "timeout"}]})
    with pytest.raises(ProviderUnavailable) as exc:
        provider.complete(_request())
    assert exc.value.reason == "timeout"


def test_replay_fixture_must_have_replies(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text('{"replies": []}')
    with pytest.raises(LLMConfigError):
        ReplayProvider.from_fixture(path)


# -- offline -----------------------------------------------------------------

SAMPLES = KnowledgeItem(
    "SAMPLE_INSTRUCTIONS",
    "Instruções de amostras",
    "# Envio\n\nAs amostras de DNA para Sanger devem ser enviadas refrigeradas, em tubos identificados.\n\n"
    "# Armazenamento\n\nGuarde o solo em local seco até a coleta pela transportadora.",
)
CATALOG = (
    CatalogItem("PRICING_RULES", "Regras de preço", "Preços de referência, descontos e orçamento", aliases=("PRECOS",)),
    CatalogItem("SAMPLE_INSTRUCTIONS", "Instruções de amostras", "Tipo, preparo, acondicionamento e envio de amostras"),
    CatalogItem("QUOTE_REQUEST", "Pedido de orçamento", "Passo a passo do pedido de orçamento", kind="procedure"),
)


def test_offline_quotes_the_best_passage_and_names_the_package():
    reply = parse_agent_reply(
        OfflineProvider().complete(_request(user="Como enviar amostras de DNA para Sanger?", knowledge=(SAMPLES,))).text
    )
    assert reply.kind == "answer"
    assert "enviadas refrigeradas" in reply.message
    assert "SAMPLE_INSTRUCTIONS" in reply.message
    assert "solo" not in reply.message


def test_offline_asks_for_a_fitting_catalog_package_it_was_not_given():
    reply = parse_agent_reply(
        OfflineProvider().complete(_request(user="Qual o preço e desconto do orçamento?", catalog=CATALOG)).text
    )
    assert reply.kind == "fetch"
    assert reply.fetch_target == "PRICING_RULES"


def test_offline_asks_for_procedures_with_the_procedure_prefix():
    catalog = (CatalogItem("QUOTE_REQUEST", "Pedido de orçamento", "Passo a passo do pedido", kind="procedure"),)
    reply = parse_agent_reply(OfflineProvider().complete(_request(user="pedido de orçamento", catalog=catalog)).text)
    assert reply.fetch_target == "::QUOTE_REQUEST"


def test_offline_says_it_does_not_know_when_nothing_fits():
    reply = parse_agent_reply(
        OfflineProvider()
        .complete(_request(user="Qual a capital da Mongólia?", knowledge=(SAMPLES,), catalog=CATALOG))
        .text
    )
    assert reply.kind == "answer"
    assert reply.message.startswith("Não encontrei essa informação")


def test_offline_never_refetches_a_delivered_package():
    request = _request(user="envio de amostras", knowledge=(SAMPLES,), catalog=CATALOG)
    reply = parse_agent_reply(OfflineProvider().complete(request).text)
    assert reply.kind == "answer"


# -- settings ------------------------------------------------------------------


def test_settings_default_to_offline():
    assert llm_settings_from_mapping({}).provider == "offline"


def test_settings_choose_openai_when_a_base_url_is_set():
    settings = llm_settings_from_mapping({"LLM_BASE_URL": "http://localhost:11434/v1", "LLM_MODEL": "llama3"})
    assert settings.provider == "openai"
    assert settings.timeout == 30.0


def test_explicit_provider_wins_over_base_url():
    settings = llm_settings_from_mapping({"LLM_PROVIDER": "offline", "LLM_BASE_URL": "http://x/v1"})
    assert settings.provider == "offline"


@pytest.mark.parametrize(
    "values",
    [
        {"LLM_PROVIDER": "gpt"},
        {"LLM_PROVIDER": "openai"},
        {"LLM_BASE_URL": "http://x/v1"},  # no model
        {"LLM_BASE_URL": "ftp://x", "LLM_MODEL": "m"},
        {"LLM_TIMEOUT": "0"},
        {"LLM_TIMEOUT": "soon"},
        {"LLM_MAX_RETRIES": "-1"},
        {"LLM_MAX_RETRIES": "many"},
        {"LLM_PROVIDER": "replay"},
        {"LLM_PROVIDER": "replay", "LLM_REPLAY_FIXTURE": "/nonexistent.json"},
    ],
)
def test_bad_llm_settings_fail_fast(values):
    with pytest.raises(LLMConfigError):
        llm_settings_from_mapping(values)


def test_agent_overrides_are_validated():
    base = llm_settings_from_mapping({})
    assert base.with_overrides(provider="offline", model="x").model == "x"
    with pytest.raises(LLMConfigError):
        base.with_overrides(provider="openai")  # no base URL


def test_offline_quotes_only_the_matching_table_row():
    table = KnowledgeItem(
        "SAMPLE_INSTRUCTIONS",
        "Instruções de amostras",
        "| Amostra | Concentração |\n|---|---|\n| PCR | 10 ng/µL |\n| Plasmídeo | 50 ng/µL |\n| RNA | 50 ng/µL |",
    )
    reply = parse_agent_reply(
        OfflineProvider().complete(_request(user="concentração de plasmídeo", knowledge=(table,))).text
    )
    assert "| Plasmídeo | 50 ng/µL |" in reply.message
    assert "| Amostra | Concentração |" in reply.message
    assert "RNA" not in reply.message


def test_offline_fetches_a_better_fitting_package_than_the_ones_delivered():
    reply = parse_agent_reply(
        OfflineProvider()
        .complete(_request(user="Qual o preço com desconto?", knowledge=(SAMPLES,), catalog=CATALOG))
        .text
    )
    assert reply.fetch_target == "PRICING_RULES"


# -- offline: never invents ------------------------------------------------------


def _offline_turn(provider, question, catalog_items, bodies, *, max_calls=4):
    """Follow the offline provider's s=99 requests the way the turn does; return the final reply."""
    knowledge: list[KnowledgeItem] = []
    for _ in range(max_calls):
        reply = parse_agent_reply(
            provider.complete(_request(user=question, knowledge=tuple(knowledge), catalog=catalog_items)).text
        )
        if reply.kind != "fetch":
            return reply, knowledge
        package_id = reply.fetch_target.removeprefix("::")
        assert package_id in bodies, f"asked for a package that is not in the catalog: {package_id}"
        assert package_id not in {k.package_id for k in knowledge}, "asked again for a delivered package"
        title, body = bodies[package_id]
        knowledge.append(KnowledgeItem(package_id, title, body))
    raise AssertionError(f"no answer after {max_calls} calls for {question!r}")


@pytest.mark.django_db
def test_offline_answers_only_quote_delivered_text_and_name_its_package(catalog):
    """Whatever is asked, the offline provider quotes a delivered package line for line, or says it does
    not know; it never writes a sentence of its own."""
    import random
    import re

    from llm.offline import DONT_KNOW_MESSAGE, EXCERPT_NOTE

    catalog_items = tuple(
        CatalogItem(e.package_id, e.title, e.summary, e.kind, tuple(e.aliases), tuple(e.keywords))
        for e in catalog.entries
    )
    bodies = {e.package_id: (e.title, e.body) for e in catalog.entries}
    vocabulary = sorted({w for e in catalog.entries for w in re.findall(r"\w{4,}", e.body)})
    foreign = ["copa", "mongólia", "futebol", "bitcoin", "receita", "bolo", "astronauta", "vulcão", "xadrez"]
    rng = random.Random(20261129)
    questions = ["Qual o prazo do Sanger?", "Quanto custa?", "Quem ganhou a copa de 1970?", "?", "oi"]
    for _ in range(100):  # word salad, partly off-topic
        words = rng.sample(vocabulary, rng.randint(1, 5)) + rng.sample(foreign, rng.randint(0, 2))
        rng.shuffle(words)
        questions.append(" ".join(words) + "?")
    body_words = [re.findall(r"\w+", e.body) for e in catalog.entries]
    for _ in range(100):  # a phrase of some package, as a user might paraphrase it
        words = rng.choice(body_words)
        start = rng.randrange(max(len(words) - 6, 1))
        questions.append(" ".join(words[start : start + rng.randint(3, 6)]) + "?")

    provider = OfflineProvider()
    answered = 0
    for question in questions:
        reply, delivered = _offline_turn(provider, question, catalog_items, bodies)
        assert reply.kind == "answer", (question, reply)
        if reply.message == DONT_KNOW_MESSAGE:
            continue
        answered += 1
        note, _, rest = reply.message.partition("\n\n")
        assert note == EXCERPT_NOTE, (question, note)  # the one sentence of its own: "this is an excerpt"
        quote, _, source = rest.rpartition("\n\nFonte: ")
        match = re.fullmatch(r"(?:.* )?\((\w+)\)", source)
        assert match, (question, source)
        package_id = match.group(1)
        assert package_id in {k.package_id for k in delivered}, (question, package_id)
        body = bodies[package_id][1]
        for line in quote.splitlines():
            assert line.rstrip("…") in body, (question, package_id, line)
    assert answered >= 60, answered  # the property is not vacuous


# -- the settings module's own defaults (config/settings/base.py) -------------------


def _base_settings_with(monkeypatch, **environ):
    """Execute config/settings/base.py afresh (not the live settings) under the given environment."""
    import importlib.util
    from pathlib import Path

    import config.settings.base as live

    for name in ("LLM_PROVIDER", "LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT", "LLM_MAX_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SECRET_KEY", "test-only")
    monkeypatch.setenv("DATABASE_URL", "sqlite:////tmp/unused.sqlite3")
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("_base_settings_probe", Path(live.__file__))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = ("LLM_PROVIDER", "LLM_BASE_URL", "LLM_MODEL", "LLM_TIMEOUT", "LLM_MAX_RETRIES")
    return llm_settings_from_mapping({name: getattr(module, name) for name in names})


@pytest.mark.parametrize(
    "environ, provider",
    [
        ({}, "offline"),
        ({"LLM_BASE_URL": "http://127.0.0.1:11434/v1"}, "openai"),
        ({"LLM_BASE_URL": "http://127.0.0.1:11434/v1", "LLM_PROVIDER": ""}, "openai"),
        ({"LLM_BASE_URL": "http://127.0.0.1:11434/v1", "LLM_PROVIDER": "offline"}, "offline"),
    ],
    ids=["nothing-set", "base-url", "base-url-empty-provider", "explicit-provider-wins"],
)
def test_the_settings_module_picks_the_provider(monkeypatch, environ, provider):
    assert _base_settings_with(monkeypatch, **environ).provider == provider
