"""The MCP server: tool and resource definitions on the official SDK's low-level ``Server``.

The low-level server (rather than ``MCPServer``'s decorators) because the
resources are the tenant's live catalog, listed per request, and the tool
schemas are written out once here with their pt examples. Handlers are async
(the SDK's contract); each runs its Django work through ``sync_to_async``
(thread-sensitive: back on the request's own thread and database connection).
"""

from __future__ import annotations

import contextvars
import json
import logging

import mcp_types as types
from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from mcp.server import Server
from mcp.shared.exceptions import MCPError

from common.exceptions import ApplicationError
from common.log_redaction import redacted_traceback
from mcp_server import services

logger = logging.getLogger("mcp_server")

# Set by the Django view for the request being served (see mcp_server.views).
current_caller: contextvars.ContextVar[services.McpCaller] = contextvars.ContextVar("mcp_caller")

CATALOG_URI = "contexto://catalog"
PACKAGE_URI_PREFIX = "contexto://packages/"
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource

INSTRUCTIONS = (
    "Contexto decides what an agent is told. Call route_context with the user's message first "
    "(e.g. 'Qual o prazo do Sanger com urgência?'): read the `full` bodies, and fetch a `listed` "
    "package with fetch_package only when you need it. Fetches are limited per user message; past "
    "the limit, or for an unknown package, the result is a hand-off: stop and tell the user the "
    "message it gives. Never answer from your own knowledge what the packages do not say."
)

_CONTEXT_SCHEMA = {
    "type": "object",
    "description": (
        "What the user is looking at: an AgentContext (camelCase, see GET /api/v1/context-schema) or "
        "the short form {focus, parents, page} of semantic IDs, e.g. "
        '{"focus": "workPermit.validity", "page": "workPermit"}.'
    ),
}

TOOLS = [
    types.Tool(
        name="route_context",
        title="Route a message to the knowledge it needs",
        description=(
            "What the agent should be told for one user message: `full` package bodies within a token "
            "budget, `listed` packages (id, title, one line: fetch them if needed), `procedures` by name, "
            "`rules` (strict ones in full), each with `why` it was chosen. Each call is a new user message "
            "and restarts the fetch budget. Example message (pt): 'Quanto custa o sequenciamento Sanger "
            "com urgência?'"
        ),
        input_schema={
            "type": "object",
            "properties": {
                "message": {"type": "string", "maxLength": 4000, "description": "The user's message, as written."},
                "context": _CONTEXT_SCHEMA,
            },
            "required": ["message"],
        },
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    ),
    types.Tool(
        name="fetch_package",
        title="Load one knowledge package by ID or alias",
        description=(
            "The body and revision of one active package, e.g. 'PRICING_RULES', an alias such as 'precos', "
            "or a procedure as '::ID'. Counted against the per-message fetch budget "
            "(MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE, 2 by default); asking again for a fetched ID counts too. "
            "Past the budget, or for an unknown, inactive or empty package, the result has status 'handoff': "
            "stop and give the user its message."
        ),
        input_schema={
            "type": "object",
            "properties": {"id_or_alias": {"type": "string", "maxLength": 200, "description": "e.g. 'precos'"}},
            "required": ["id_or_alias"],
        },
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    ),
    types.Tool(
        name="resolve_reference",
        title="Resolve 'isso / este / aqui' against the screen",
        description=(
            "Binds the message's references to what the user sees (the deictic resolver): 'isso/this' → "
            "the focused element, 'este registro/this record' → the selection, 'aqui/here' → the page. "
            "Returns the target, the rewritten message, intent and record change, or a clarifying question "
            "when it is ambiguous. Example (pt): message 'o que significa isso?' with the focus on "
            "'workPermit.validity'. The context is a whole AgentContext (validated, at most 5,120 bytes and "
            "300 s old)."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "message": {"type": "string", "maxLength": 4000},
                "context": {**_CONTEXT_SCHEMA, "description": "An AgentContext (GET /api/v1/context-schema)."},
            },
            "required": ["message", "context"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="explain_result",
        title="Have a numeric result narrated and its numbers checked",
        description=(
            "Stores a numeric result (as POST /api/v1/results) and enqueues its explanation: the model "
            "narrates it in pt-BR and every number it cites is checked against the facts. Returns the status "
            "(queued, pending or done with an outcome); poll get_explanation. The fields are POST /api/v1/results' "
            "(docs/explanations.md). Example: result_id 'vendas-2026-03', "
            "verdict 'Meta batida', totals {'receita': 1200000}, budget 1000000, period '2026-03'."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "result_id": {"type": "string", "maxLength": 128},
                "verdict": {"type": "string", "maxLength": 500},
                "totals": {"type": "object", "additionalProperties": {"type": ["number", "string"]}},
                "breakdowns": {"type": "object"},
                "budget": {"type": ["number", "string", "null"]},
                "target": {"type": ["number", "string", "null"]},
                "period": {"type": "string", "description": "YYYY-MM, YYYY, YYYY-Qn or YYYY-Sn"},
                "rule": {"type": "object"},
                "units": {"type": "object", "description": "e.g. {'receita': 'currency', 'margem': 'percent'}"},
                "counts": {"type": "object"},
                "labels": {"type": "object"},
                "rounding": {"type": "string", "enum": ["exact", "scale"]},
                "pii_keys": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["result_id", "verdict"],
        },
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
    ),
    types.Tool(
        name="get_explanation",
        title="The explanation of a result",
        description=(
            "Status and outcome (verified, rejected, no_response, provider_unavailable) of a result's "
            "explanation; the narrative only when every cited number was verified. Example: "
            "result_id 'vendas-2026-03'."
        ),
        input_schema={
            "type": "object",
            "properties": {"result_id": {"type": "string", "maxLength": 128}},
            "required": ["result_id"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
]


def _dumps(value) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)


def _run_tool(name: str, arguments: dict) -> dict:
    caller = current_caller.get()
    if name == "route_context":
        return services.tool_route_context(
            caller=caller, message=arguments.get("message"), context=arguments.get("context")
        )
    if name == "fetch_package":
        return services.tool_fetch_package(caller=caller, id_or_alias=arguments.get("id_or_alias"))
    if name == "resolve_reference":
        return services.tool_resolve_reference(
            caller=caller, message=arguments.get("message"), context=arguments.get("context")
        )
    if name == "explain_result":
        return services.tool_explain_result(caller=caller, arguments=arguments)
    if name == "get_explanation":
        return services.tool_get_explanation(caller=caller, result_id=arguments.get("result_id"))
    raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")


def _summary(name: str, body: dict) -> str:
    """A short human-readable first content block; the whole result follows as JSON."""
    if body.get("status") == "handoff":
        return f"HAND-OFF ({body['handoff']['reason']}): {body['instruction']} Message for the user: {body['message']}"
    if name == "fetch_package":
        return f"{body['id']} (revision {body['revision']}): {body['title']}\n\n{body['body']}"
    return _dumps(body)


async def _list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def _tool_error(code: str, message: str, details: dict) -> types.CallToolResult:
    error = {"error": {"code": code, "message": message, "details": details}}
    return types.CallToolResult(
        content=[types.TextContent(text=_dumps(error))], structured_content=json.loads(_dumps(error)), is_error=True
    )


async def _call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    try:
        body = await sync_to_async(_run_tool)(params.name, arguments)
    except ApplicationError as exc:
        logger.info("mcp tool error tool=%s code=%s", params.name, exc.code)
        return _tool_error(exc.code, exc.message, exc.details)
    except MCPError:
        raise
    except Exception as exc:  # noqa: BLE001 - the boundary: the SDK would send the exception's text to the client
        # The stack, not exc_info: the exception's text may quote the tool's arguments, and a handler
        # without common.log_redaction's filter (a test's, an error tracker's) would print it.
        logger.error(
            "mcp tool failed tool=%s error=%s\n%s", params.name, exc.__class__.__name__, redacted_traceback(exc)
        )
        return _tool_error("INTERNAL_ERROR", "An unexpected error occurred.", {})
    structured = json.loads(_dumps(body))
    content = [types.TextContent(text=_summary(params.name, structured))]
    if content[0].text != _dumps(structured):
        content.append(types.TextContent(text=_dumps(structured)))
    return types.CallToolResult(content=content, structured_content=structured, is_error=False)


def _package_resource(row: dict) -> types.Resource:
    return types.Resource(
        uri=PACKAGE_URI_PREFIX + row["id"],
        name=row["id"],
        title=row["title"],
        description=f"{row['summary']} (revision {row['revision']})",
        mime_type="text/markdown",
        meta={"revision": row["revision"], "kind": row["kind"]},
    )


async def _list_resources(ctx, params) -> types.ListResourcesResult:
    version, rows = await sync_to_async(services.catalog_listing)()
    catalog = types.Resource(
        uri=CATALOG_URI,
        name="catalog",
        title="Knowledge catalog",
        description=f"Every active package: id, title, one-line summary, kind, revision (catalog version {version}).",
        mime_type="application/json",
    )
    return types.ListResourcesResult(resources=[catalog, *(_package_resource(r) for r in rows)])


async def _list_resource_templates(ctx, params) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=PACKAGE_URI_PREFIX + "{id}",
                name="package",
                title="A knowledge package by ID or alias",
                description="e.g. contexto://packages/PRICING_RULES or contexto://packages/precos",
                mime_type="text/markdown",
            )
        ]
    )


def _front_matter(doc: dict) -> str:
    head = "\n".join(f"{key}: {doc[key]}" for key in ("id", "title", "summary", "kind", "revision", "catalog_version"))
    return f"---\n{head}\n---\n{doc['body']}"


async def _read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == CATALOG_URI:
        version, rows = await sync_to_async(services.catalog_listing)()
        text = _dumps({"catalog_version": version, "packages": rows})
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )
    if uri.startswith(PACKAGE_URI_PREFIX):
        doc = await sync_to_async(services.package_document)(uri[len(PACKAGE_URI_PREFIX) :])
        if doc is not None:
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(
                        uri=uri, mime_type="text/markdown", text=_front_matter(doc), meta={"revision": doc["revision"]}
                    )
                ]
            )
    raise MCPError(RESOURCE_NOT_FOUND, "Resource not found", {"uri": uri})


def build_server() -> Server:
    from django.conf import settings

    return Server(
        "contexto",
        version=getattr(settings, "CONTEXTO_VERSION", "1"),
        title="Contexto",
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_resource_templates,
        on_read_resource=_read_resource,
    )
