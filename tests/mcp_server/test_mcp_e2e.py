"""MCP end to end: the SDK's own client against the live test server (WSGI, a real socket).

"legacy" is the initialize handshake (2025-11-25 and older: Contexto issues an
Mcp-Session-Id); "auto" probes server/discover and speaks the stateless
2026-07-28 revision. Both must work: hosts of either era exist.
"""

import datetime as dt
import json
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx2
import pytest
from django.test import override_settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conversations.models import Handoff, HandoffReason, SessionStatus
from mcp_server.models import McpSession
from tests.conversations.context.samples import VALIDITY, make_context

QUESTION = "Qual o prazo do Sanger com urgência?"


def _run(scenario):
    # Its own thread: a session-scoped Playwright browser (tests/browser) keeps an event loop
    # running in the main thread, and anyio.run refuses to start a second one there.
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, scenario).result(timeout=120)


def _client(live_server, token, *, mode="legacy", path="/mcp/"):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(live_server.url + path, http_client=http), mode=mode)


@pytest.fixture
def mcp_world(transactional_db):
    """live_server tests flush the database between tests, data migrations included."""
    from conversations.agents_seed import agents_seed_ensure
    from knowledge.services import catalog_sync_bundled

    agents_seed_ensure()
    catalog_sync_bundled()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_lists_the_five_tools_and_routes_a_message_with_why(live_server, mcp_world, user, mode):
    async def scenario():
        async with _client(live_server, user.auth_token.key, mode=mode) as client:
            tools = await client.list_tools()
            result = await client.call_tool("route_context", {"message": QUESTION})
            return tools, result

    tools, result = _run(scenario)
    by_name = {t.name: t for t in tools.tools}
    assert set(by_name) == {"route_context", "fetch_package", "resolve_reference", "explain_result", "get_explanation"}
    assert "Sanger" in by_name["route_context"].description  # a pt example in every description
    assert by_name["fetch_package"].input_schema["required"] == ["id_or_alias"]
    assert not result.is_error
    body = result.structured_content
    assert body["full"], body
    assert all(item["why"] for item in body["full"])
    assert "DELIVERY_TIMELINES" in [item["id"] for item in body["full"]]
    assert body["fetch_budget"] == {"allowed": 2, "used": 0}


def test_fetch_package_by_alias_returns_the_body_and_revision(live_server, mcp_world, user):
    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            return await client.call_tool("fetch_package", {"id_or_alias": "precos"})

    result = _run(scenario)
    assert not result.is_error
    assert result.structured_content["id"] == "PRICING_RULES"
    assert result.structured_content["revision"] == 1
    assert result.structured_content["fetch_budget"] == {"allowed": 2, "used": 1}
    assert result.content[0].text.startswith("PRICING_RULES (revision 1)")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_third_fetch_in_one_message_hands_off_and_the_session_takes_no_more_calls(
    live_server, mcp_world, user, mode
):
    async def scenario():
        async with _client(live_server, user.auth_token.key, mode=mode) as client:
            await client.call_tool("route_context", {"message": QUESTION})
            first = await client.call_tool("fetch_package", {"id_or_alias": "PRICING_RULES"})
            again = await client.call_tool("fetch_package", {"id_or_alias": "PRICING_RULES"})  # counts too
            third = await client.call_tool("fetch_package", {"id_or_alias": "DELIVERY_TIMELINES"})
            after = await client.call_tool("fetch_package", {"id_or_alias": "PRICING_RULES"})
            return first, again, third, after

    first, again, third, after = _run(scenario)
    assert first.structured_content["status"] == "ok"
    assert again.structured_content["fetch_budget"]["used"] == 2
    assert third.structured_content["status"] == "handoff"
    assert third.structured_content["handoff"]["reason"] == "budget_exceeded"
    assert "body" not in third.structured_content
    assert third.content[0].text.startswith("HAND-OFF (budget_exceeded)")
    assert after.is_error and after.structured_content["error"]["code"] == "SESSION_NOT_OPEN"
    handoff = Handoff.objects.get()
    assert handoff.reason == HandoffReason.BUDGET_EXCEEDED
    assert handoff.session.status == SessionStatus.HANDED_OFF
    assert handoff.session.user == user
    assert handoff.session.collected_packages == ["PRICING_RULES", "DELIVERY_TIMELINES"]


def test_each_routed_message_restarts_the_budget(live_server, mcp_world, user):
    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            results = []
            for _ in range(2):
                await client.call_tool("route_context", {"message": QUESTION})
                results.append(await client.call_tool("fetch_package", {"id_or_alias": "precos"}))
                results.append(await client.call_tool("fetch_package", {"id_or_alias": "DELIVERY_TIMELINES"}))
            return results

    results = _run(scenario)
    assert [r.structured_content["status"] for r in results] == ["ok"] * 4
    assert [r.structured_content["fetch_budget"]["used"] for r in results] == [1, 2, 1, 2]
    assert not Handoff.objects.exists()


@override_settings(MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE=1)
def test_the_budget_is_the_setting(live_server, mcp_world, user):
    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            await client.call_tool("route_context", {"message": QUESTION})
            await client.call_tool("fetch_package", {"id_or_alias": "precos"})
            return await client.call_tool("fetch_package", {"id_or_alias": "DELIVERY_TIMELINES"})

    assert _run(scenario).structured_content["handoff"]["reason"] == "budget_exceeded"


def test_an_unknown_package_hands_off_for_uncertainty(live_server, mcp_world, user):
    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            return await client.call_tool("fetch_package", {"id_or_alias": "NO_SUCH_PACKAGE"})

    result = _run(scenario)
    assert result.structured_content["status"] == "handoff"
    assert result.structured_content["handoff"]["reason"] == "uncertainty"
    assert Handoff.objects.get().reason == HandoffReason.UNCERTAINTY


def test_resolve_reference_binds_isso_to_the_focus(live_server, mcp_world, user):
    # No selection and no route parameters: nothing the tenant must be granted first.
    context = make_context(drop=("selection",), navigation={"route": "/pt"}, captured_at=dt.datetime.now(dt.UTC))

    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            good = await client.call_tool("resolve_reference", {"message": "o que significa isso?", "context": context})
            stale = await client.call_tool(
                "resolve_reference",
                {"message": "isso", "context": {**context, "capturedAt": "2020-01-01T00:00:00Z"}},
            )
            return good, stale

    good, stale = _run(scenario)
    assert not good.is_error
    assert good.structured_content["resolution"]["target"]["semanticId"] == VALIDITY
    assert stale.is_error and stale.structured_content["error"]["code"] == "STALE_CONTEXT_AGE"


def test_explain_result_then_get_explanation(live_server, mcp_world, user):
    facts = {
        "result_id": "vendas-2026-03",
        "verdict": "Meta batida",
        "totals": {"receita": 1200000},
        "period": "2026-03",
    }

    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            created = await client.call_tool("explain_result", facts)
            fetched = await client.call_tool("get_explanation", {"result_id": "vendas-2026-03"})
            missing = await client.call_tool("get_explanation", {"result_id": "nope"})
            invalid = await client.call_tool("explain_result", {"result_id": "x"})
            return created, fetched, missing, invalid

    created, fetched, missing, invalid = _run(scenario)
    assert created.structured_content["created"] is True
    assert created.structured_content["result_id"] == "vendas-2026-03"
    assert fetched.structured_content["status"] == created.structured_content["status"]
    assert fetched.structured_content["status"] in ("queued", "pending", "done")
    assert missing.is_error and missing.structured_content["error"]["code"] == "RESULT_NOT_FOUND"
    assert invalid.is_error and invalid.structured_content["error"]["code"] == "VALIDATION_ERROR"
    assert "verdict" in invalid.structured_content["error"]["details"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_resources_list_every_active_package_with_its_revision_and_the_catalog(live_server, mcp_world, user, mode):
    async def scenario():
        async with _client(live_server, user.auth_token.key, mode=mode) as client:
            listed = await client.list_resources()
            package = await client.read_resource("contexto://packages/PRICING_RULES")
            by_alias = await client.read_resource("contexto://packages/precos")
            catalog = await client.read_resource("contexto://catalog")
            try:
                await client.read_resource("contexto://packages/NO_SUCH_PACKAGE")
                missing = None
            except MCPError as exc:
                missing = exc
            return listed, package, by_alias, catalog, missing

    listed, package, by_alias, catalog, missing = _run(scenario)
    uris = [str(r.uri) for r in listed.resources]
    assert uris[0] == "contexto://catalog"
    assert len(uris) == 16 and "contexto://packages/PRICING_RULES" in uris
    pricing = next(r for r in listed.resources if r.name == "PRICING_RULES")
    assert pricing.meta["revision"] == 1 and pricing.mime_type == "text/markdown"
    text = package.contents[0].text
    assert text.startswith("---\nid: PRICING_RULES\n") and "revision: 1" in text
    assert by_alias.contents[0].text == text
    rows = json.loads(catalog.contents[0].text)["packages"]
    assert {r["id"] for r in rows} == {str(u).rsplit("/", 1)[1] for u in uris[1:]}
    assert missing is not None and missing.code == -32002


def test_a_deactivated_package_leaves_the_resources(live_server, mcp_world, user, curator):
    from knowledge.models import Package
    from knowledge.services import package_set_active

    package_set_active(acting_user=curator, package=Package.objects.get(package_id="PRICING_RULES"), active=False)

    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            listed = await client.list_resources()
            fetched = await client.call_tool("fetch_package", {"id_or_alias": "PRICING_RULES"})
            return listed, fetched

    listed, fetched = _run(scenario)
    assert "contexto://packages/PRICING_RULES" not in [str(r.uri) for r in listed.resources]
    assert fetched.structured_content["handoff"]["reason"] == "uncertainty"


def test_another_tenants_token_sees_nothing_of_this_one(live_server, mcp_world, user, other_user):
    async def scenario():
        async with _client(live_server, user.auth_token.key) as client:
            await client.call_tool("explain_result", {"result_id": "r-1", "verdict": "ok", "totals": {"a": 1}})
            await client.call_tool("route_context", {"message": QUESTION})
            await client.call_tool("fetch_package", {"id_or_alias": "precos"})
            await client.call_tool("fetch_package", {"id_or_alias": "precos"})
        async with _client(live_server, other_user.auth_token.key) as other:
            explanation = await other.call_tool("get_explanation", {"result_id": "r-1"})
            fetched = await other.call_tool("fetch_package", {"id_or_alias": "precos"})  # its own budget
            return explanation, fetched

    explanation, fetched = _run(scenario)
    assert explanation.structured_content["error"]["code"] == "RESULT_NOT_FOUND"
    assert fetched.structured_content["fetch_budget"]["used"] == 1
    mine = McpSession.objects.filter(user=user).exclude(conversation=None).get()
    theirs = McpSession.objects.filter(user=other_user).exclude(conversation=None).get()
    assert mine.tenant != theirs.tenant and mine.conversation.tenant == mine.tenant


def test_a_session_id_is_bound_to_the_token_that_opened_it(live_server, mcp_world, user, other_user):
    url = live_server.url + "/mcp/"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    with httpx2.Client(timeout=30) as http:
        opened = http.post(url, json=init, headers={**headers, "Authorization": f"Token {user.auth_token.key}"})
        session_id = opened.headers["Mcp-Session-Id"]
        mine = {**headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
        ok = http.post(url, json=call, headers={**mine, "Authorization": f"Bearer {user.auth_token.key}"})
        stolen = http.post(url, json=call, headers={**mine, "Authorization": f"Bearer {other_user.auth_token.key}"})
        closed = http.delete(url, headers={**mine, "Authorization": f"Bearer {user.auth_token.key}"})
        after = http.post(url, json=call, headers={**mine, "Authorization": f"Bearer {user.auth_token.key}"})
    assert opened.status_code == 200 and session_id.startswith("mcp-")
    assert ok.status_code == 200 and len(ok.json()["result"]["tools"]) == 5
    assert stolen.status_code == 404
    assert closed.status_code == 204
    assert after.status_code == 404


@pytest.mark.parametrize(
    "authorization", [None, "Bearer not-a-token", "Basic dXNlcjpwYXNz"], ids=["none", "unknown", "basic"]
)
def test_without_a_valid_token_the_endpoint_answers_401_in_the_error_shape(live_server, mcp_world, authorization):
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if authorization:
        headers["Authorization"] = authorization
    with httpx2.Client(timeout=30) as http:
        response = http.post(
            live_server.url + "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers
        )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "NOT_AUTHENTICATED"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_endpoint_without_a_trailing_slash_works_too(live_server, mcp_world, user):
    async def scenario():
        async with _client(live_server, user.auth_token.key, path="/mcp") as client:
            return await client.list_tools()

    assert len(_run(scenario).tools) == 5


def test_concurrent_clients_are_served_side_by_side(live_server, mcp_world, user, other_user):
    """Each request gets its own event loop and SDK manager: threads of one process do not interfere."""

    def one_client(token, mode):
        async def scenario():
            async with _client(live_server, token, mode=mode) as client:
                tools = await client.list_tools()
                routed = await client.call_tool("route_context", {"message": QUESTION})
                return len(tools.tools), routed.is_error

        return anyio.run(scenario)

    tokens = [user.auth_token.key, other_user.auth_token.key] * 2
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one_client, tokens, ["legacy", "auto", "auto", "legacy"], timeout=120))
    assert results == [(5, False)] * 4


def test_get_is_405_and_an_oversize_body_is_413(live_server, mcp_world, user, settings):
    headers = {"Authorization": f"Bearer {user.auth_token.key}", "Accept": "application/json, text/event-stream"}
    with httpx2.Client(timeout=30) as http:
        got = http.get(live_server.url + "/mcp/", headers=headers)
        big = http.post(
            live_server.url + "/mcp/",
            content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * 300_000 + b'"}}',
            headers={**headers, "Content-Type": "application/json"},
        )
    assert got.status_code == 405 and "POST" in got.headers["Allow"]
    assert big.status_code == 413 and big.json()["error"]["code"] == "REQUEST_TOO_LARGE"
