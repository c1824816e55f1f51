"""The actions API: the capability registry, an action's state, confirm, and the client's report."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from actions.selectors import action_get, capability_list
from actions.services import action_confirm, action_payload, action_report
from common.pagination import DefaultPagination
from common.serializers import StrictSerializer


class CapabilityOutputSerializer(serializers.Serializer):
    id = serializers.CharField(source="capability_id")
    label = serializers.CharField()
    description = serializers.CharField()
    intent = serializers.CharField()
    semanticIds = serializers.ListField(source="semantic_ids", child=serializers.CharField())
    entityType = serializers.CharField(source="entity_type")
    parameters = serializers.JSONField(source="parameters_schema", help_text="JSON Schema of {value, unit}")
    roles = serializers.ListField(child=serializers.CharField())
    requiresConfirmation = serializers.BooleanField(source="requires_confirmation")
    execution = serializers.ChoiceField(choices=["webhook", "client"])

    class Meta:
        ref_name = "Capability"


ActionOutputSerializer = inline_serializer(
    "Action",
    {
        "id": serializers.UUIDField(),
        "capability": serializers.CharField(allow_null=True),
        "status": serializers.ChoiceField(
            choices=[
                "proposed",
                "needs_confirmation",
                "denied",
                "confirmed",
                "executing",
                "executed",
                "verified",
                "failed",
            ]
        ),
        "reason": serializers.CharField(allow_null=True),
        "preview": serializers.DictField(
            allow_null=True,
            help_text="{target, label, entity, before, after, value, unit, expiresAt, confirmationToken}",
        ),
        "execution": serializers.ChoiceField(choices=["webhook", "client"], allow_null=True),
        "target": serializers.CharField(),
        "parameters": serializers.DictField(),
        "entity": serializers.DictField(allow_null=True),
        "message": serializers.CharField(allow_null=True, help_text="The agent's sentence once verified or failed"),
    },
)

ERRORS_404 = OpenApiResponse(description="ACTION_NOT_FOUND (also another tenant's action)")


class CapabilityListApi(APIView):
    @extend_schema(
        summary="The active capabilities: what the agent may do, on which semantic ids, under which rules",
        responses={200: CapabilityOutputSerializer(many=True)},
    )
    def get(self, request):
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(capability_list(), request, view=self)
        return paginator.get_paginated_response(CapabilityOutputSerializer(page, many=True).data)


class ActionDetailApi(APIView):
    @extend_schema(
        summary="One action of the caller's tenant", responses={200: ActionOutputSerializer, 404: ERRORS_404}
    )
    def get(self, request, action_id):
        return Response(action_payload(action_get(tenant=request.tenant, action_id=action_id)))


class ActionConfirmApi(APIView):
    class InputSerializer(StrictSerializer):
        confirmationToken = serializers.CharField(max_length=200)

        class Meta:
            ref_name = "ActionConfirmInput"

    @extend_schema(
        summary="Confirm a preview (single use, before it expires); a webhook capability executes and is verified",
        request=InputSerializer,
        responses={
            200: ActionOutputSerializer,
            400: OpenApiResponse(description="VALIDATION_ERROR"),
            403: OpenApiResponse(description="ACTION_FORBIDDEN, ACTION_CONFIRMATION_INVALID, ACTION_DENIED"),
            404: ERRORS_404,
            409: OpenApiResponse(description="ACTION_NOT_AWAITING_CONFIRMATION, ACTION_PREVIEW_EXPIRED"),
        },
    )
    def post(self, request, action_id):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        action = action_confirm(
            acting_user=request.user,
            tenant=request.tenant,
            action_id=action_id,
            token=serializer.validated_data["confirmationToken"],
        )
        return Response(action_payload(action))


class ActionReportApi(APIView):
    class InputSerializer(StrictSerializer):
        value = serializers.JSONField(help_text="What the front end's handler returned: the field's new value")
        context = serializers.JSONField(help_text="The AgentContext captured after the change (a whole context)")

        class Meta:
            ref_name = "ActionReportInput"

        def validate_context(self, value):
            if not isinstance(value, dict):
                raise serializers.ValidationError("Must be a JSON object.")
            return value

        def validate_value(self, value):
            if isinstance(value, (dict, list)):
                raise serializers.ValidationError("Must be a scalar.")
            return value

    @extend_schema(
        summary="Client mode: the front end applied a confirmed action; verified against the context it sends",
        request=InputSerializer,
        responses={
            200: ActionOutputSerializer,
            400: OpenApiResponse(description="VALIDATION_ERROR, INVALID_CONTEXT, CONTEXT_TIMESTAMP_IN_FUTURE"),
            403: OpenApiResponse(description="ACTION_FORBIDDEN, CONTEXT_FORBIDDEN"),
            404: ERRORS_404,
            409: OpenApiResponse(description="ACTION_NOT_AWAITING_REPORT, STALE_CONTEXT_AGE, STALE_CONTEXT_VERSION"),
            413: OpenApiResponse(description="CONTEXT_SIZE_LIMIT_EXCEEDED"),
        },
    )
    def post(self, request, action_id):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        action, snapshot_id = action_report(
            acting_user=request.user,
            tenant=request.tenant,
            action_id=action_id,
            value=serializer.validated_data["value"],
            context=serializer.validated_data["context"],
        )
        return Response({**action_payload(action), "contextSnapshotId": snapshot_id})
