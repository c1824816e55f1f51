"""What the MCP tools do, as plain synchronous services over the existing apps.

The MCP transport (``mcp_server.server``) only translates: every tool here
calls the same selectors and services as the REST API, so an MCP host and a
front end get the same routing, the same budget and the same hand-offs.

Budget semantics are the agent turn's (DESIGN.md, "Agent reply contract"):
``route_context`` is an inbound message and resets the counter; each
``fetch_package`` counts (asking again for a collected ID counts too);
the fetch past ``MAX_CONTEXT_ENRICHMENTS_PER_MESSAGE`` hands off
(``budget_exceeded``), and an unknown, inactive or empty package hands off
(``uncertainty``). A handed-off conversation takes no more tool calls.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from rest_framework import serializers

from common.exceptions import ApplicationError, NotFoundError
from common.input_guard import text_problem
from conversations.models import Handoff, HandoffReason, Message, MessageRole, MessageStatus, Session, SessionStatus
from conversations.services import session_create
from conversations.services.sessions import session_transition
from conversations.services.turns.outcome import HANDOFF_MESSAGE, max_enrichments
from knowledge.catalog import get_active_catalog
from knowledge.routing_service import fetch_feedback_record_for_session, route_context
from knowledge.semantic_context import validate_semantic_context
from mcp_server.models import McpSession

logger = logging.getLogger("mcp_server")

MAX_MESSAGE_CHARS = 4000  # as POST /api/v1/context
SESSION_KEY_PREFIX = "mcp-"


class McpSessionNotFoundError(NotFoundError):
    code = "MCP_SESSION_NOT_FOUND"
    message = "Unknown or closed MCP session: initialize a new one."


class McpSessionNotOpenError(ApplicationError):
    code = "SESSION_NOT_OPEN"
    status_code = 409
    message = "This MCP session was handed off to a person or closed: start a new MCP session."


class McpInvalidArgumentsError(ApplicationError):
    code = "VALIDATION_ERROR"
    status_code = 400
    message = "Invalid tool arguments."


@dataclass(frozen=True)
class McpCaller:
    """Who is calling: the token's user, its tenant, and the MCP session key if the client has one."""

    user_id: int
    tenant_id: int
    session_key: str | None = None


# --- MCP sessions ------------------------------------------------------------------------


def mcp_session_open(*, user, tenant) -> McpSession:
    """A new handshake-era MCP session (its key becomes the Mcp-Session-Id header)."""
    session = McpSession(key=SESSION_KEY_PREFIX + secrets.token_hex(16), tenant=tenant, user=user)
    session.full_clean(exclude=["conversation"])
    session.save()
    logger.info("mcp session opened mcp_session=%s tenant=%s", session.pk, tenant.pk)
    return session


def mcp_session_known(*, key: str, user) -> bool:
    """A key is valid only with the token that opened it: another token sees no such session."""
    return McpSession.objects.filter(key=key, user=user, closed_at__isnull=True).exists()


@transaction.atomic
def mcp_session_close(*, key: str, user) -> bool:
    session = McpSession.objects.select_for_update().filter(key=key, user=user, closed_at__isnull=True).first()
    if session is None:
        return False
    session.closed_at = timezone.now()
    session.save(update_fields=["closed_at"])
    if session.conversation_id:
        conversation = Session.objects.select_for_update().get(pk=session.conversation_id)
        # A handed-off conversation stays in the operators' queue; only an open one ends with the client.
        if conversation.status == SessionStatus.OPEN:
            session_transition(session=conversation, status=SessionStatus.CLOSED)
    logger.info("mcp session closed mcp_session=%s", session.pk)
    return True


def _conversation_for(caller: McpCaller, *, start_over: bool = False) -> Session:
    """The conversation session counting this MCP session's fetches (created on first use).

    Without an Mcp-Session-Id (stateless clients) the user's default MCP session is
    used; ``start_over`` gives it a fresh conversation once the old one was handed
    off, because such a client has no other way to begin again.
    """
    from django.contrib.auth import get_user_model

    from accounts.models import Tenant

    user = get_user_model().objects.get(pk=caller.user_id)
    with transaction.atomic():
        if caller.session_key:
            mcp = (
                McpSession.objects.select_for_update()
                .filter(key=caller.session_key, user_id=caller.user_id, closed_at__isnull=True)
                .first()
            )
            if mcp is None:
                raise McpSessionNotFoundError()
        else:
            mcp, _ = McpSession.objects.select_for_update().get_or_create(
                key=f"user:{caller.user_id}", defaults={"tenant_id": caller.tenant_id, "user_id": caller.user_id}
            )
        conversation = mcp.conversation
        stale = conversation is not None and conversation.status != SessionStatus.OPEN
        if conversation is None or (stale and start_over and not caller.session_key):
            conversation = session_create(acting_user=user, tenant=Tenant.objects.get(pk=caller.tenant_id))
            mcp.conversation = conversation
            mcp.save(update_fields=["conversation"])
    return conversation


def _router_session_key(conversation: Session) -> str:
    return f"mcp:{conversation.pk}"


def _lock_open(conversation_id: int) -> Session:
    locked = Session.objects.select_for_update(of=("self",)).get(pk=conversation_id)
    if locked.status != SessionStatus.OPEN:
        raise McpSessionNotOpenError(details={"status": locked.status})
    return locked


def _text(value, field: str, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    if not isinstance(value, str) or not value.strip():
        raise McpInvalidArgumentsError(details={field: ["Must be a non-empty string."]})
    if len(value) > limit:
        raise McpInvalidArgumentsError(details={field: [f"At most {limit} characters."]})
    problem = text_problem(value)  # NUL, a lone surrogate: PostgreSQL cannot store it (a DataError)
    if problem:
        raise McpInvalidArgumentsError(details={field: [problem]})
    return value.strip()


def _validation(exc: serializers.ValidationError) -> McpInvalidArgumentsError:
    detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
    return McpInvalidArgumentsError(details=serializers.as_serializer_error(serializers.ValidationError(detail)))


# --- tools ---------------------------------------------------------------------------------


def tool_route_context(*, caller: McpCaller, message, context=None) -> dict:
    text = _text(message, "message")
    try:
        semantic_context = validate_semantic_context(context)
    except serializers.ValidationError as exc:
        raise _validation(exc) from None
    conversation = _conversation_for(caller, start_over=True)
    with transaction.atomic():
        locked = _lock_open(conversation.pk)
        inbound = Message(session=locked, role=MessageRole.USER, text=text, status=MessageStatus.PROCESSED)
        inbound.full_clean()
        inbound.save()
        # A new inbound message: the fetch counter restarts, as in an agent turn.
        locked.context_enrichment_count = 0
        locked.save(update_fields=["context_enrichment_count", "updated_at"])
    result = route_context(
        message=text,
        semantic_context=semantic_context,
        session_key=_router_session_key(conversation),
        tenant=conversation.tenant,
    )
    body = result.as_dict()
    body["fetch_budget"] = {"allowed": max_enrichments(), "used": 0}
    logger.info(
        "mcp route_context conversation=%s full=%s listed=%s",
        conversation.pk,
        len(body.get("full") or ()),
        len(body.get("listed") or ()),
    )
    return body


def _handoff(*, conversation_id: int, reason: str, detail: str) -> dict:
    with transaction.atomic():
        locked = Session.objects.select_for_update(of=("self",)).get(pk=conversation_id)
        inbound = (
            locked.messages.filter(role=MessageRole.USER, reply__isnull=True).order_by("-created_at", "-id").first()
        )
        reply = Message(
            session=locked,
            role=MessageRole.ASSISTANT,
            text=HANDOFF_MESSAGE,
            status=MessageStatus.HANDOFF,
            reply_to=inbound,
            context_enrichments=locked.context_enrichment_count,
        )
        reply.save()
        handoff = Handoff(session=locked, message=reply, reason=reason, detail=detail[:500])
        handoff.full_clean()
        handoff.save()
        session_transition(session=locked, status=SessionStatus.HANDED_OFF)
    logger.info("mcp handoff conversation=%s reason=%s", conversation_id, reason)
    return {
        "status": "handoff",
        "handoff": {"reason": reason, "detail": handoff.detail},
        "message": HANDOFF_MESSAGE,
        "instruction": (
            "Do not answer from your own knowledge: tell the user the message above; a person continues. "
            "This MCP session accepts no more calls."
        ),
    }


def tool_fetch_package(*, caller: McpCaller, id_or_alias) -> dict:
    requested = _text(id_or_alias, "id_or_alias", limit=200)
    conversation = _conversation_for(caller)
    catalog = get_active_catalog()
    entry = catalog.resolve(requested)
    if entry is None or not entry.body.strip():
        with transaction.atomic():
            _lock_open(conversation.pk)
        return _handoff(
            conversation_id=conversation.pk,
            reason=HandoffReason.UNCERTAINTY,
            detail=f"Requested package {requested[:100]!r} is unknown, inactive or empty.",
        )
    budget = max_enrichments()
    with transaction.atomic():
        locked = _lock_open(conversation.pk)
        collected = list(locked.collected_packages or [])
        if entry.package_id not in collected:
            collected.append(entry.package_id)
        locked.collected_packages = collected
        locked.context_enrichment_count += 1
        used = locked.context_enrichment_count
        locked.save(update_fields=["collected_packages", "context_enrichment_count", "updated_at"])
    try:
        fetch_feedback_record_for_session(
            session_key=_router_session_key(conversation), package_id=entry.package_id, tenant=conversation.tenant
        )
    except Exception as exc:  # noqa: BLE001 - feedback is a hint; losing one never fails a fetch
        logger.error("mcp fetch_feedback_failed conversation=%s error=%s", conversation.pk, exc.__class__.__name__)
    if used > budget:
        return _handoff(
            conversation_id=conversation.pk,
            reason=HandoffReason.BUDGET_EXCEEDED,
            detail=f"Fetch {used} in one message exceeds the budget of {budget} (last: {entry.package_id}).",
        )
    logger.info("mcp fetch_package conversation=%s used=%s budget=%s", conversation.pk, used, budget)
    return {
        "status": "ok",
        "id": entry.package_id,
        "title": entry.title,
        "kind": entry.kind,
        "revision": entry.revision,
        "catalog_version": catalog.version,
        "body": entry.body,
        "fetch_budget": {"allowed": budget, "used": used},
    }


def tool_resolve_reference(*, caller: McpCaller, message, context) -> dict:
    from django.contrib.auth import get_user_model

    from accounts.models import Tenant
    from conversations.context.services import context_prepare, context_resolve

    text = _text(message, "message")
    if not isinstance(context, dict):
        raise McpInvalidArgumentsError(details={"context": ["Must be an AgentContext object."]})
    user = get_user_model().objects.get(pk=caller.user_id)
    tenant = Tenant.objects.get(pk=caller.tenant_id)
    # No stored snapshots here: a delta ({baseSnapshotId, delta}) has no base and is refused.
    prepared = context_prepare(tenant=tenant, user=user, session=None, payload=context)
    turn = context_resolve(prepared=prepared, text=text)
    return {**turn.response_fields(), "semanticContext": turn.semantic_context}


def tool_explain_result(*, caller: McpCaller, arguments: dict) -> dict:
    from django.contrib.auth import get_user_model

    from accounts.models import Tenant
    from explanations.apis import ResultCreateApi
    from explanations.selectors import explanation_status
    from explanations.services import result_create

    serializer = ResultCreateApi.InputSerializer(data=arguments)
    try:
        serializer.is_valid(raise_exception=True)
    except serializers.ValidationError as exc:
        raise _validation(exc) from None
    data = dict(serializer.validated_data)
    rule = data.pop("rule", None) or {}
    result, created = result_create(
        acting_user=get_user_model().objects.get(pk=caller.user_id),
        tenant=Tenant.objects.get(pk=caller.tenant_id),
        rule_core=rule.get("core", ""),
        rule_specifics=rule.get("specifics", ""),
        rule_numbers=rule.get("numbers", []),
        **data,
    )
    result.refresh_from_db()  # the eager path may already have an outcome
    return {"created": created, **explanation_status(result=result)}


def tool_get_explanation(*, caller: McpCaller, result_id) -> dict:
    from accounts.models import Tenant
    from explanations.selectors import explanation_status, result_get

    result_id = _text(result_id, "result_id", limit=128)
    result = result_get(tenant=Tenant.objects.get(pk=caller.tenant_id), result_id=result_id)
    return explanation_status(result=result)


# --- resources -----------------------------------------------------------------------------


def catalog_listing() -> tuple[int, list[dict]]:
    catalog = get_active_catalog()
    rows = [
        {
            "id": e.package_id,
            "title": e.title,
            "summary": e.summary,
            "kind": e.kind,
            "strict": e.strict,
            "aliases": list(e.aliases),
            "revision": e.revision,
        }
        for e in catalog.entries
    ]
    return catalog.version, rows


def package_document(package_ref: str) -> dict | None:
    catalog = get_active_catalog()
    entry = catalog.resolve(package_ref)
    if entry is None:
        return None
    return {
        "id": entry.package_id,
        "title": entry.title,
        "summary": entry.summary,
        "kind": entry.kind,
        "revision": entry.revision,
        "catalog_version": catalog.version,
        "body": entry.body,
    }
