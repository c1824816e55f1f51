from django.core.exceptions import ObjectDoesNotExist

from explanations.exceptions import ResultNotFoundError
from explanations.models import Explanation, Result


def result_get(*, tenant, result_id: str) -> Result:
    """A result of this tenant with its explanation (one query), or
    RESULT_NOT_FOUND, also for another tenant's result."""
    result = (
        Result.objects.filter(tenant=tenant, result_id=result_id)
        .select_related("explanation")
        .defer("explanation__prompt", "explanation__response")
        .first()
    )
    if result is None:
        raise ResultNotFoundError(details={"result_id": result_id})
    return result


def explanation_for_result(*, result: Result) -> Explanation | None:
    try:
        return result.explanation
    except ObjectDoesNotExist:
        return None


def explanation_status(*, result: Result) -> dict:
    """What an end user may see (REST and MCP alike): the narrative only when every number checked."""
    explanation = explanation_for_result(result=result)
    verified = explanation is not None and explanation.verified
    return {
        "result_id": result.result_id,
        "status": result.explanation_status,
        "outcome": result.explanation_outcome or None,
        "verified": verified if result.explanation_status == Result.ExplanationStatus.DONE else None,
        "narrative": explanation.narrative if verified else None,
        "explanation_id": str(explanation.id) if explanation else None,
        "explained_at": result.explained_at,
    }
