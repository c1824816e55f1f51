"""POST /api/v1/context: what an agent would be told for a message.

It composes the knowledge router and the ontology route, so it lives on the top
floor, above both (knowledge never imports ontology).
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.serializers import StrictSerializer
from knowledge.routing_service import route_context
from knowledge.semantic_context import validate_semantic_context
from ontology.services import ontology_for_caller


class ContextApi(APIView):
    """What the agent would be told for a message: the knowledge router's delivery, and the ontology's route."""

    class InputSerializer(StrictSerializer):
        message = serializers.CharField(max_length=4000, trim_whitespace=True)
        context = serializers.JSONField(required=False, allow_null=True)
        budget_tokens = serializers.IntegerField(required=False, min_value=50, max_value=32000)
        max_full = serializers.IntegerField(required=False, min_value=0, max_value=20)
        session_key = serializers.CharField(required=False, max_length=100)
        # ontology routing (docs/ontology.md): skills override the caller's profile for this call
        skills = serializers.ListField(child=serializers.CharField(max_length=64), max_length=50, required=False)
        external_user_id = serializers.CharField(required=False, max_length=128, allow_blank=True, default="")

        def validate_context(self, value):
            return validate_semantic_context(value)

    class FullSerializer(serializers.Serializer):
        id = serializers.CharField()
        title = serializers.CharField()
        revision = serializers.IntegerField()
        body = serializers.CharField()
        score = serializers.FloatField()
        why = serializers.ListField(child=serializers.DictField())

    class ListedSerializer(serializers.Serializer):
        id = serializers.CharField()
        title = serializers.CharField()
        summary = serializers.CharField()
        why = serializers.ListField(child=serializers.DictField())

    class ProcedureSerializer(serializers.Serializer):
        id = serializers.CharField()
        title = serializers.CharField()
        summary = serializers.CharField()

    class RuleSerializer(serializers.Serializer):
        id = serializers.CharField()
        title = serializers.CharField()
        summary = serializers.CharField()
        strict = serializers.BooleanField()
        shape = serializers.ChoiceField(choices=["full", "listed"])
        revision = serializers.IntegerField()
        body = serializers.CharField(required=False)
        score = serializers.FloatField()
        why = serializers.ListField(child=serializers.DictField())

    class OutputSerializer(serializers.Serializer):
        catalog_version = serializers.IntegerField()
        parts = serializers.ListField(child=serializers.CharField())
        full = serializers.ListField(child=serializers.DictField())
        listed = serializers.ListField(child=serializers.DictField())
        procedures = serializers.ListField(child=serializers.DictField())
        rules = serializers.ListField(child=serializers.DictField())
        timings_ms = serializers.DictField(child=serializers.FloatField())

    @extend_schema(
        summary="Route a message to the knowledge it needs (full, listed, by name)",
        request=InputSerializer,
        responses={
            200: inline_serializer(
                "ContextResponse",
                {
                    "catalog_version": serializers.IntegerField(),
                    "parts": serializers.ListField(child=serializers.CharField()),
                    "full": FullSerializer(many=True),
                    "listed": ListedSerializer(many=True),
                    "procedures": ProcedureSerializer(many=True),
                    "rules": RuleSerializer(many=True),
                    "timings_ms": serializers.DictField(child=serializers.FloatField()),
                    "ontology": serializers.DictField(required=False, help_text="see docs/ontology.md"),
                },
            ),
            400: OpenApiResponse(description="Invalid input (VALIDATION_ERROR, MALFORMED_REQUEST)"),
        },
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ontology = _ontology_block(request, data)  # first: an unknown skill is a 400 before any work
        result = route_context(
            message=data["message"],
            semantic_context=data.get("context"),
            budget_tokens=data.get("budget_tokens"),
            max_full=data.get("max_full"),
            session_key=data.get("session_key"),
            tenant=getattr(request, "tenant", None),
        )
        body = result.as_dict()
        if ontology is not None:
            body["ontology"] = ontology
        return Response(body)


def _ontology_block(request, data) -> dict | None:
    """The ontology route when the body names `skills` or the caller has a profile with skills."""
    return ontology_for_caller(
        tenant=request.tenant,
        user=request.user,
        message=data["message"],
        skills=data.get("skills"),
        external_user_id=data.get("external_user_id", ""),
        origin="context",
    )
