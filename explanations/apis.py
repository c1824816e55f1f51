from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from common.serializers import StrictSerializer
from explanations.models import ExplanationOutcome, Result
from explanations.numbers.check import ROUNDING_RULES
from explanations.prompts import PERIOD_RE, UNIT_KINDS
from explanations.selectors import explanation_status, result_get
from explanations.services import result_create

_DECIMAL = {"max_digits": 24, "decimal_places": 6, "coerce_to_string": False}


class _RuleSerializer(StrictSerializer):
    core = serializers.CharField(allow_blank=True, required=False, default="", max_length=20_000)
    specifics = serializers.CharField(allow_blank=True, required=False, default="", max_length=20_000)
    numbers = serializers.ListField(child=serializers.JSONField(), required=False, default=list, max_length=200)

    def validate_numbers(self, items):
        cleaned = []
        for item in items:
            if isinstance(item, dict):
                number = _RuleNumberSerializer(data=item)
                number.is_valid(raise_exception=True)
                cleaned.append(dict(number.validated_data))
            else:
                cleaned.append(serializers.DecimalField(**_DECIMAL).to_internal_value(item))
        return cleaned


class _RuleNumberSerializer(StrictSerializer):
    value = serializers.DecimalField(**_DECIMAL)
    kind = serializers.ChoiceField(choices=UNIT_KINDS, default="number")


class ExplanationStatusSerializer(serializers.Serializer):
    result_id = serializers.CharField()
    status = serializers.ChoiceField(choices=Result.ExplanationStatus.choices)
    outcome = serializers.ChoiceField(choices=ExplanationOutcome.choices, allow_null=True)
    verified = serializers.BooleanField(allow_null=True)
    narrative = serializers.CharField(allow_null=True, help_text="Only when verified.")
    explanation_id = serializers.UUIDField(allow_null=True)
    explained_at = serializers.DateTimeField(allow_null=True)


class ResultCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        result_id = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$", max_length=128)
        verdict = serializers.CharField(max_length=500)
        totals = serializers.DictField(child=serializers.DecimalField(**_DECIMAL), required=False, default=dict)
        breakdowns = serializers.DictField(
            child=serializers.DictField(child=serializers.DecimalField(**_DECIMAL)), required=False, default=dict
        )
        budget = serializers.DecimalField(**_DECIMAL, required=False, allow_null=True, default=None)
        target = serializers.DecimalField(**_DECIMAL, required=False, allow_null=True, default=None)
        period = serializers.RegexField(PERIOD_RE, required=False, allow_blank=True, default="")
        rule = _RuleSerializer(required=False)
        units = serializers.DictField(child=serializers.ChoiceField(choices=UNIT_KINDS), required=False, default=dict)
        pii_keys = serializers.ListField(child=serializers.CharField(max_length=100), required=False, default=list)
        counts = serializers.DictField(
            child=serializers.IntegerField(min_value=-(10**15), max_value=10**15), required=False, default=dict
        )
        labels = serializers.DictField(
            child=serializers.ListField(child=serializers.CharField(max_length=100), max_length=20),
            required=False,
            default=dict,
        )
        rounding = serializers.ChoiceField(choices=ROUNDING_RULES, required=False, default="exact")

    @extend_schema(
        summary="Send a numeric result to be explained",
        description=(
            "Stores the result and enqueues its explanation. Sending the same result again returns it (200); "
            "different facts under the same result_id are a 409. Breakdown dimensions listed in pii_keys "
            "never reach the model. `units` kinds: currency (BRL), currency:USD, currency:EUR, percent (a fraction), "
            "percentage_points, count, number, code; `counts` are named integers; `labels` name facts in pt "
            "for attribution; `rounding` is exact (default) or scale; `period` is YYYY-MM, YYYY, YYYY-Qn or YYYY-Sn."
        ),
        request=InputSerializer,
        responses={
            201: ExplanationStatusSerializer,
            200: ExplanationStatusSerializer,
            400: OpenApiResponse(description="INVALID_RESULT / VALIDATION_ERROR"),
            409: OpenApiResponse(description="RESULT_ALREADY_EXISTS"),
        },
    )
    def post(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        rule = data.pop("rule", None) or {}
        result, created = result_create(
            acting_user=request.user,
            tenant=request.tenant,
            rule_core=rule.get("core", ""),
            rule_specifics=rule.get("specifics", ""),
            rule_numbers=rule.get("numbers", []),
            **data,
        )
        result.refresh_from_db()  # the eager/fast path may already have an outcome
        return Response(
            ExplanationStatusSerializer(explanation_status(result=result)).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class ResultExplanationApi(APIView):
    @extend_schema(
        summary="The explanation of a result: pending, or its outcome",
        description="The narrative is returned only when every number it cites was checked (outcome verified).",
        responses={200: ExplanationStatusSerializer, 404: OpenApiResponse(description="RESULT_NOT_FOUND")},
    )
    def get(self, request, result_id: str):
        result = result_get(tenant=request.tenant, result_id=result_id)
        return Response(ExplanationStatusSerializer(explanation_status(result=result)).data)
