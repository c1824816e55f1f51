from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.pagination import DefaultPagination
from knowledge.catalog import get_active_catalog
from knowledge.exceptions import PackageNotFoundError
from knowledge.routing_service import fetch_feedback_record_for_session


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
