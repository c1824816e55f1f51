from explanations.exceptions import ResultNotFoundError
from explanations.models import Explanation, Result


def result_get(*, tenant, result_id: str) -> Result:
    """A result of this tenant, or RESULT_NOT_FOUND (also for another tenant's)."""
    result = Result.objects.filter(tenant=tenant, result_id=result_id).first()
    if result is None:
        raise ResultNotFoundError(details={"result_id": result_id})
    return result


def explanation_for_result(*, result: Result) -> Explanation | None:
    return Explanation.objects.filter(pk=result.explanation_id, tenant_id=result.tenant_id).first()
