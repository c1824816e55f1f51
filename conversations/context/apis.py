"""UI-context endpoints: the published AgentContext schema and accessible entities."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import SAFE_METHODS, BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import HasTenant
from common.openapi import page_parameters, paginated
from common.pagination import DefaultPagination
from common.serializers import StrictCharField, StrictSerializer

from . import selectors, services
from .schema import AGENT_CONTEXT_SCHEMA


class ContextSchemaApi(APIView):
    """The JSON Schema every ``context`` sent with a message must satisfy."""

    @extend_schema(
        summary="The AgentContext JSON Schema (draft 2020-12)",
        responses={200: OpenApiResponse(description="JSON Schema document")},
    )
    def get(self, request):
        response = Response(AGENT_CONTEXT_SCHEMA)
        response["Cache-Control"] = "private, max-age=300"
        return response


class CanManageAccessibleEntities(BasePermission):
    """Members read; only tenant admins (or staff) grant and revoke.

    Otherwise the user whose context is being checked could grant themselves
    access, and the authorization would be decoration.
    """

    message = "Only tenant administrators may grant or revoke accessible entities."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        membership = getattr(request.user, "membership", None)
        return bool(request.user.is_staff or (membership and membership.role == "admin"))


ENTITY_PERMISSIONS = [IsAuthenticated, HasTenant, CanManageAccessibleEntities]


class AccessibleEntityOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    entityType = serializers.CharField(source="entity_type")
    entityId = serializers.CharField(source="entity_id")
    createdAt = serializers.DateTimeField(source="created_at")


class AccessibleEntityListCreateApi(APIView):
    permission_classes = ENTITY_PERMISSIONS

    class InputSerializer(StrictSerializer):
        entityType = serializers.RegexField(r"^[A-Za-z][A-Za-z0-9_.-]*$", max_length=100)
        entityId = StrictCharField(max_length=200, trim_whitespace=True)

    @extend_schema(
        summary="Entities of the caller's tenant that contexts may name (paginated)",
        operation_id="v1_accessible_entities_list",
        parameters=[
            OpenApiParameter("entityType", str, required=False, description="Filter by type."),
            *page_parameters(),
        ],
        responses={
            200: paginated(AccessibleEntityOutputSerializer, "PaginatedAccessibleEntityList"),
            404: OpenApiResponse(description="Invalid page"),
        },
    )
    def get(self, request):
        entity_type = request.query_params.get("entityType") or None
        queryset = selectors.accessible_entity_list(tenant=request.tenant, entity_type=entity_type)
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(AccessibleEntityOutputSerializer(page, many=True).data)

    @extend_schema(
        summary="Grant the tenant access to an entity (idempotent: 200 when it already exists)",
        request=InputSerializer,
        responses={201: AccessibleEntityOutputSerializer, 200: AccessibleEntityOutputSerializer},
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        entity, created = services.accessible_entity_create(
            acting_user=request.user,
            tenant=request.tenant,
            entity_type=serializer.validated_data["entityType"],
            entity_id=serializer.validated_data["entityId"],
        )
        return Response(
            AccessibleEntityOutputSerializer(entity).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class AccessibleEntityDetailApi(APIView):
    permission_classes = ENTITY_PERMISSIONS

    @extend_schema(
        summary="One accessible entity of the caller's tenant",
        responses={
            200: AccessibleEntityOutputSerializer,
            404: OpenApiResponse(description="ACCESSIBLE_ENTITY_NOT_FOUND"),
        },
    )
    def get(self, request, entity_pk: int):
        entity = selectors.accessible_entity_get(tenant=request.tenant, entity_pk=entity_pk)
        return Response(AccessibleEntityOutputSerializer(entity).data)

    @extend_schema(
        summary="Revoke access to an entity",
        responses={204: None, 404: OpenApiResponse(description="ACCESSIBLE_ENTITY_NOT_FOUND")},
    )
    def delete(self, request, entity_pk: int):
        services.accessible_entity_delete(acting_user=request.user, tenant=request.tenant, entity_pk=entity_pk)
        return Response(status=status.HTTP_204_NO_CONTENT)
