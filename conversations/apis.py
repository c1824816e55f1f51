from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from common.openapi import page_parameters, paginated
from common.pagination import DefaultPagination
from common.serializers import StrictSerializer
from conversations.exceptions import InvalidIdempotencyKeyError
from conversations.models import HandoffReason
from conversations.selectors import session_get, session_messages
from conversations.services import message_feedback_set, message_send, session_create

IDEMPOTENCY_HEADER = "Idempotency-Key"
MAX_MESSAGE_CHARS = 8_000


class JSONStringMixin:
    """Accept only a JSON string: DRF's CharField turns ``5`` into ``"5"``, which hides a client bug."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise serializers.ValidationError("Not a valid string.", code="invalid")
        return super().to_internal_value(data)


class StrictCharField(JSONStringMixin, serializers.CharField):
    pass


class StrictSlugField(JSONStringMixin, serializers.SlugField):
    pass


class SessionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    agent = serializers.CharField(source="agent.slug")
    status = serializers.CharField()
    collected_packages = serializers.ListField(child=serializers.CharField())
    context_enrichment_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class HandoffOutputSerializer(serializers.Serializer):
    # The stable reason codes, listed in the schema so clients can switch on them.
    reason = serializers.ChoiceField(choices=HandoffReason.choices)
    detail = serializers.CharField()


class PackageRefSerializer(serializers.Serializer):
    id = serializers.CharField()
    revision = serializers.IntegerField()


class SessionCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        agent = StrictSlugField(required=False, allow_blank=True, max_length=64)

        class Meta:
            ref_name = "SessionCreateInput"

    @extend_schema(
        summary="Start a session with an agent (the default agent when none is named)",
        request=InputSerializer,
        responses={
            201: SessionOutputSerializer,
            400: OpenApiResponse(description="AGENT_NOT_FOUND, VALIDATION_ERROR"),
            409: OpenApiResponse(description="NO_DEFAULT_AGENT"),
        },
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        session = session_create(
            acting_user=request.user, tenant=request.tenant, agent_slug=serializer.validated_data.get("agent") or None
        )
        return Response(SessionOutputSerializer(session).data, status=status.HTTP_201_CREATED)


class SessionDetailApi(APIView):
    @extend_schema(
        summary="One session of the caller's tenant",
        responses={200: SessionOutputSerializer, 404: OpenApiResponse(description="SESSION_NOT_FOUND")},
    )
    def get(self, request, session_id: int):
        session = session_get(tenant=request.tenant, session_id=session_id)
        return Response(SessionOutputSerializer(session).data)


class SessionMessagesApi(APIView):
    """GET lists the session's messages; POST sends one and runs the agent turn."""

    # The context engine checks every context field itself (NUL, lone surrogates) and names it.
    json_guard_delegated_keys = frozenset({"context"})

    class InputSerializer(StrictSerializer):
        message = StrictCharField(max_length=MAX_MESSAGE_CHARS, trim_whitespace=True)
        # The UI AgentContext (camelCase JSON); validated by the context engine.
        context = serializers.JSONField(required=False, allow_null=True)

        class Meta:
            ref_name = "MessageSendInput"

        def validate_context(self, value):
            if value is not None and not isinstance(value, dict):
                raise serializers.ValidationError("Must be a JSON object.")
            return value

    class MessageOutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        role = serializers.CharField()
        text = serializers.CharField()
        status = serializers.CharField()
        reply_to = serializers.IntegerField(source="reply_to_id", allow_null=True)
        handoff = serializers.SerializerMethodField()
        packages = PackageRefSerializer(many=True)
        catalog_version = serializers.IntegerField(allow_null=True)
        llm_calls = serializers.IntegerField()
        context_snapshot_id = serializers.IntegerField(allow_null=True)
        # The context engine's wire name (camelCase like the AgentContext); same value.
        contextSnapshotId = serializers.IntegerField(source="context_snapshot_id", allow_null=True)
        timings_ms = serializers.DictField(child=serializers.IntegerField())
        grounding = serializers.JSONField(
            allow_null=True, help_text="{outcome: verified|unverified|skipped, unmatched: [{text, reason}]}"
        )
        created_at = serializers.DateTimeField()

        class Meta:
            ref_name = "SessionMessage"

        def get_handoff(self, message) -> dict | None:
            handoff = getattr(message, "handoff", None) if message.status == "handoff" else None
            return HandoffOutputSerializer(handoff).data if handoff else None

    TurnOutputSerializer = inline_serializer(
        "TurnResponse",
        {
            "message_id": serializers.IntegerField(),
            "session_id": serializers.IntegerField(),
            "status": serializers.ChoiceField(choices=["answered", "handoff", "clarification"]),
            "reply": serializers.CharField(),
            "handoff": HandoffOutputSerializer(allow_null=True),
            "packages": PackageRefSerializer(many=True),
            "catalog_version": serializers.IntegerField(),
            "timings_ms": serializers.DictField(child=serializers.IntegerField()),
            "session_status": serializers.CharField(),
            # UI context engine (docs/context-engine.md): null when no context was sent.
            "contextSnapshotId": serializers.IntegerField(allow_null=True),
            # The answer's numbers checked against what the turn delivered (docs/conversations.md).
            "grounding": serializers.DictField(
                help_text="{outcome: verified|unverified|skipped, unmatched: [{text, reason}]}"
            ),
            "intent": serializers.DictField(allow_null=True, help_text="{intent: UPDATE_FIELD, target, value, unit}"),
            "recordChange": serializers.DictField(allow_null=True, help_text="{previous, current, notice}"),
            "clarification": serializers.DictField(allow_null=True, help_text="{reason, question, options}"),
            "resolution": serializers.DictField(
                allow_null=True, help_text="{target, references, language, rewrittenMessage}"
            ),
            # The action chain (docs/actions.md): what became of an UPDATE_FIELD intent.
            "action": serializers.DictField(
                allow_null=True,
                help_text="{id, capability, status: proposed|needs_confirmation|denied|confirmed|executed|verified|"
                "failed, reason, preview, execution, target, parameters, entity, message}",
            ),
        },
    )

    @extend_schema(
        summary="The session's messages, oldest first (paginated)",
        parameters=page_parameters(),
        responses={
            200: paginated(MessageOutputSerializer, "PaginatedMessageList"),
            404: OpenApiResponse(description="SESSION_NOT_FOUND, or an invalid page"),
        },
    )
    def get(self, request, session_id: int):
        session = session_get(tenant=request.tenant, session_id=session_id)
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(session_messages(session=session), request, view=self)
        return paginator.get_paginated_response(self.MessageOutputSerializer(page, many=True).data)

    @extend_schema(
        summary="Send a user message; the agent answers, hands off or asks back",
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="A retried POST with the same key returns the first response, without a new LLM call.",
            )
        ],
        responses={
            201: TurnOutputSerializer,
            404: OpenApiResponse(description="SESSION_NOT_FOUND"),
            400: OpenApiResponse(
                description="VALIDATION_ERROR, MALFORMED_REQUEST, INVALID_IDEMPOTENCY_KEY, INVALID_CONTEXT, "
                "CONTEXT_TIMESTAMP_IN_FUTURE"
            ),
            403: OpenApiResponse(description="CONTEXT_FORBIDDEN"),
            409: OpenApiResponse(
                description="SESSION_NOT_OPEN, IDEMPOTENT_REQUEST_IN_PROGRESS, STALE_CONTEXT_AGE, "
                "STALE_CONTEXT_VERSION, UNKNOWN_BASE_CONTEXT"
            ),
            413: OpenApiResponse(description="CONTEXT_SIZE_LIMIT_EXCEEDED"),
            422: OpenApiResponse(description="IDEMPOTENCY_KEY_REUSED"),
        },
    )
    def post(self, request, session_id: int):
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is not None:
            key = key.strip()
            if not key or len(key) > 200 or not key.isascii() or not key.isprintable():
                raise InvalidIdempotencyKeyError()
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = message_send(
            acting_user=request.user,
            tenant=request.tenant,
            session_id=session_id,
            text=serializer.validated_data["message"],
            context=serializer.validated_data.get("context"),
            idempotency_key=key,
        )
        response = Response(result.response, status=status.HTTP_201_CREATED)
        if result.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class MessageFeedbackApi(APIView):
    """Thumbs up/down on an agent reply, by the caller; repeating it is a no-op."""

    class InputSerializer(StrictSerializer):
        rating = serializers.ChoiceField(choices=["up", "down"])
        reason = StrictCharField(required=False, allow_blank=True, max_length=500, trim_whitespace=True)

        class Meta:
            ref_name = "MessageFeedbackInput"

    class OutputSerializer(serializers.Serializer):
        message_id = serializers.IntegerField()
        rating = serializers.CharField()
        reason = serializers.CharField()
        policy_version = serializers.IntegerField(allow_null=True)

        class Meta:
            ref_name = "MessageFeedbackOutput"

    @extend_schema(
        summary="Rate an agent reply (up/down); one rating per reply and user, updated in place",
        request=InputSerializer,
        responses={
            201: OutputSerializer,
            200: OutputSerializer,
            400: OpenApiResponse(description="VALIDATION_ERROR, MESSAGE_NOT_RATABLE"),
            404: OpenApiResponse(description="SESSION_NOT_FOUND, MESSAGE_NOT_FOUND"),
        },
    )
    def post(self, request, session_id: int, message_id: int):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = message_feedback_set(
            acting_user=request.user,
            tenant=request.tenant,
            session_id=session_id,
            message_id=message_id,
            rating=serializer.validated_data["rating"],
            reason=serializer.validated_data.get("reason", ""),
        )
        fb = result.feedback
        data = {
            "message_id": fb.message_id,
            "rating": fb.rating,
            "reason": fb.reason,
            "policy_version": fb.policy_version,
        }
        return Response(data, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)
