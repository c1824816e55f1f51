"""Ontology API: the caller's profile skills, the skill list, and routing a message."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.openapi import page_parameters, paginated
from common.pagination import DefaultPagination
from common.serializers import StrictSerializer
from ontology.models import ProfileSkill, Tier
from ontology.selectors import profile_get, profile_skill_rows, skill_list
from ontology.services import ontology_route, profile_set_skills


def _external_user_id_field():
    return serializers.CharField(max_length=128, required=False, allow_blank=True, default="")


def _skill_ids_field(**kwargs):
    return serializers.ListField(child=serializers.CharField(max_length=64), max_length=50, **kwargs)


def _profile_payload(profile, external_user_id: str) -> dict:
    if profile is None:
        return {"external_user_id": external_user_id, "tier": Tier.SEMENTE, "skills": [], "situational_skills": []}
    rows = profile_skill_rows(profile)
    return {
        "external_user_id": profile.external_user_id,
        "tier": profile.tier,
        "skills": [ps.skill.slug for ps in rows],
        "situational_skills": [ps.skill.slug for ps in rows if ps.source == ProfileSkill.Source.SITUATIONAL],
    }


class ProfileOutputSerializer(serializers.Serializer):
    external_user_id = serializers.CharField()
    tier = serializers.CharField()
    skills = serializers.ListField(child=serializers.CharField())
    situational_skills = serializers.ListField(child=serializers.CharField())


class ProfileApi(APIView):
    """GET and PUT the active skills of an end user (`external_user_id`) or of the caller."""

    class QuerySerializer(StrictSerializer):
        external_user_id = _external_user_id_field()

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "ProfileInput"

        skills = _skill_ids_field()
        external_user_id = _external_user_id_field()
        tier = serializers.ChoiceField(choices=Tier.choices, required=False)

    @extend_schema(
        summary="A profile's active skills",
        parameters=[OpenApiParameter("external_user_id", str, description="end user id; omit for the caller")],
        responses={200: ProfileOutputSerializer},
    )
    def get(self, request):
        query = self.QuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        external = query.validated_data["external_user_id"]
        profile = profile_get(tenant=request.tenant, user=request.user, external_user_id=external)
        return Response(ProfileOutputSerializer(_profile_payload(profile, external)).data)

    @extend_schema(
        summary="Set a profile's active skills (replaces the set)",
        request=InputSerializer,
        responses={
            200: ProfileOutputSerializer,
            400: OpenApiResponse(description="UNKNOWN_SKILL, SKILL_TIER_NOT_ALLOWED"),
        },
    )
    def put(self, request):
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        profile = profile_set_skills(
            acting_user=request.user,
            tenant=request.tenant,
            skills=data["skills"],
            external_user_id=data["external_user_id"],
            tier=data.get("tier"),
        )
        return Response(ProfileOutputSerializer(_profile_payload(profile, data["external_user_id"])).data)


class SkillListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "Skill"

        id = serializers.CharField(source="slug")
        category = serializers.CharField()
        ontology_class = serializers.CharField(source="ontology_class.slug")
        rag_bias = serializers.DictField(child=serializers.FloatField())
        index_filters = serializers.JSONField()
        min_tier = serializers.CharField()
        inference_agent = serializers.CharField()
        version = serializers.CharField()
        critical = serializers.BooleanField()
        situational = serializers.BooleanField()
        activation = serializers.JSONField()
        deactivation = serializers.JSONField()

    @extend_schema(
        summary="Active skills (paginated)",
        parameters=page_parameters(),
        responses={
            200: paginated(OutputSerializer, "PaginatedSkillList"),
            404: OpenApiResponse(description="Invalid page"),
        },
    )
    def get(self, request):
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(skill_list(), request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class OntologyRouteOutputSerializer(serializers.Serializer):
    pattern = serializers.CharField()
    confidence = serializers.FloatField()
    distribution = serializers.DictField(child=serializers.FloatField())
    strategy = serializers.CharField()
    filters = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    steps = serializers.ListField(child=serializers.JSONField())
    interruptions = serializers.ListField(child=serializers.JSONField())
    skills = serializers.ListField(child=serializers.CharField())
    activated_skills = serializers.ListField(child=serializers.CharField())
    deactivated_skills = serializers.ListField(child=serializers.CharField())
    context = serializers.CharField()
    route_id = serializers.IntegerField(allow_null=True)
    skills_source = serializers.CharField()


class OntologyRouteApi(APIView):
    """Route a message through the ontology (pattern, strategy distribution, filters, the
    CoT steps with chunk citations, interruptions). `skills` override the profile."""

    class InputSerializer(StrictSerializer):
        class Meta:
            ref_name = "OntologyRouteInput"

        message = serializers.CharField(max_length=4000, trim_whitespace=True)
        skills = _skill_ids_field(required=False)
        external_user_id = _external_user_id_field()

    @extend_schema(
        summary="Route a message through the ontology",
        request=InputSerializer,
        responses={
            200: OntologyRouteOutputSerializer,
            400: OpenApiResponse(description="VALIDATION_ERROR, UNKNOWN_SKILL"),
        },
    )
    def post(self, request):
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        profile = profile_get(tenant=request.tenant, user=request.user, external_user_id=data["external_user_id"])
        result = ontology_route(
            tenant=request.tenant, message=data["message"], skills=data.get("skills"), profile=profile, origin="api"
        )
        return Response(result.as_dict())
