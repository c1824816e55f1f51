from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.openapi import page_parameters
from common.pagination import DefaultPagination
from common.serializers import StrictIntegerField, StrictSerializer
from knowledge.catalog import get_active_catalog
from knowledge.exceptions import PackageNotFoundError
from knowledge.feedback import fetch_feedback_record_for_session
from knowledge.router import route_context
from knowledge.semantic_context import validate_semantic_context


class PackageListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(source="package_id")
        title = serializers.CharField()
        summary = serializers.CharField()
        kind = serializers.CharField()
        strict = serializers.BooleanField()
        aliases = serializers.ListField(child=serializers.CharField())
        revision = serializers.IntegerField()

    @extend_schema(
        summary="The active catalog",
        operation_id="v1_packages_list",
        parameters=page_parameters(),
        responses=inline_serializer(
            "PackageListResponse",
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "catalog_version": serializers.IntegerField(),
                "results": OutputSerializer(many=True),
            },
        ),
    )
    def get(self, request):
        catalog = get_active_catalog()
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(list(catalog.entries), request, view=self)
        items = [{**row, "catalog_version": catalog.version} for row in self.OutputSerializer(page, many=True).data]
        response = paginator.get_paginated_response(items)
        response.data["catalog_version"] = catalog.version
        return response


class PackageDetailApi(APIView):
    class OutputSerializer(serializers.Serializer):
        id = serializers.CharField(source="package_id")
        title = serializers.CharField()
        summary = serializers.CharField()
        kind = serializers.CharField()
        strict = serializers.BooleanField()
        aliases = serializers.ListField(child=serializers.CharField())
        keywords = serializers.ListField(child=serializers.CharField())
        semantic_ids = serializers.ListField(child=serializers.CharField())
        source = serializers.CharField()
        body = serializers.CharField()
        revision = serializers.IntegerField()

    @extend_schema(
        summary="One active package by ID or alias",
        responses={200: OutputSerializer, 404: OpenApiResponse(description="Unknown or inactive package")},
    )
    def get(self, request, package_ref: str):
        catalog = get_active_catalog()
        entry = catalog.resolve(package_ref)
        if entry is None:
            raise PackageNotFoundError(details={"requested": package_ref})
        data = dict(self.OutputSerializer(entry).data)
        data["catalog_version"] = catalog.version
        session_key = request.query_params.get("session")
        if session_key:
            # A fetch inside a session after the router listed the entry: fetch feedback.
            fetch_feedback_record_for_session(
                session_key=session_key, package_id=entry.package_id, tenant=getattr(request, "tenant", None)
            )
        return Response(data)


class ContextApi(APIView):
    """What the agent would be told for a message: the knowledge router's delivery."""

    # A POST that writes nothing to the database: run again after a dropped connection.
    database_retry_safe = True

    class InputSerializer(StrictSerializer):
        message = serializers.CharField(max_length=4000, trim_whitespace=True)
        context = serializers.JSONField(required=False, allow_null=True)
        budget_tokens = StrictIntegerField(required=False, min_value=50, max_value=32000)
        max_full = StrictIntegerField(required=False, min_value=0, max_value=20)
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
    from ontology.services import ontology_for_caller  # ontology already builds on knowledge.retrieval

    return ontology_for_caller(
        tenant=request.tenant,
        user=request.user,
        message=data["message"],
        skills=data.get("skills"),
        external_user_id=data.get("external_user_id", ""),
        origin="context",
    )
