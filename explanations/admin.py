"""Admin for operators (results and their explanation status) and auditors
(explanations, with the numbers that failed the check highlighted)."""

from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from common.exceptions import ApplicationError
from explanations.models import Explanation, Result
from explanations.services import result_explanation_retry


# Why a cited number failed, as auditors read it.
REASON_LABELS = {
    "not_in_list": "not in the list",
    "wrong_kind": "wrong kind",
    "wrong_entity": "wrong entity",
    "wrong_direction": "wrong direction",
    "rounded": "rounded",
    "pii": "personal data",
}


def reason_label(reason: str) -> str:
    return REASON_LABELS.get(reason or "not_in_list", reason)


def highlight_unmatched(narrative: str, unmatched: list[dict]) -> str:
    """The narrative as HTML, each unmatched number in <mark> (escaped) with its reason."""
    spans = sorted((n["start"], n["end"], n.get("reason") or "not_in_list") for n in unmatched)
    parts, cursor = [], 0
    for start, end, reason in spans:
        if start < cursor or end > len(narrative):
            continue
        parts.append(format_html("{}", narrative[cursor:start]))
        parts.append(
            format_html(
                '<mark class="unmatched-number reason-{}" title="{}">{}</mark> <small class="unmatched-reason">[{}]</small>',
                reason,
                reason_label(reason),
                narrative[start:end],
                reason_label(reason),
            )
        )
        cursor = end
    parts.append(format_html("{}", narrative[cursor:]))
    body = format_html_join("", "{}", ((part,) for part in parts))
    return format_html('<div style="white-space: pre-wrap; max-width: 60em">{}</div>', body)


def _pre(text: str) -> str:
    return format_html('<pre style="white-space: pre-wrap; max-width: 60em">{}</pre>', text)


@admin.register(Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["result_id", "tenant", "explanation_status", "explanation_outcome", "created_at", "explained_at"]
    list_filter = ["explanation_status", "explanation_outcome", "tenant"]
    search_fields = ["result_id"]
    list_select_related = ["tenant"]
    readonly_fields = [f.name for f in Result._meta.fields]
    actions = ["retry_explanation"]

    def has_add_permission(self, request):
        return False  # results come from client systems through the API

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Explain again (provider was unavailable)", permissions=["view"])
    def retry_explanation(self, request, queryset):
        retried = 0
        for result in queryset:
            try:
                result_explanation_retry(acting_user=request.user, result=result)
                retried += 1
            except ApplicationError as exc:
                self.message_user(request, f"{result.result_id}: {exc.message}", level=messages.WARNING)
        if retried:
            self.message_user(request, f"{retried} result(s) queued for a new explanation.")


@admin.register(Explanation)
class ExplanationAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "result_link",
        "tenant",
        "outcome",
        "verified",
        "unmatched_count",
        "model",
        "duration_ms",
        "created_at",
    ]
    list_filter = ["outcome", "verified", "tenant", "model"]
    search_fields = ["result__result_id", "id"]
    list_select_related = ["result", "tenant"]
    fields = [
        "id",
        "tenant",
        "result",
        "outcome",
        "verified",
        "narrative_checked",
        "unmatched_list",
        "rounding",
        "prompt_text",
        "response_text",
        "model",
        "duration_ms",
        "task_id",
        "created_at",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # audit evidence; it goes away only with its result

    @admin.display(description="result", ordering="result__result_id")
    def result_link(self, obj):
        return obj.result.result_id

    @admin.display(description="unmatched")
    def unmatched_count(self, obj):
        return len(obj.unmatched_numbers)

    @admin.display(description="narrative (unmatched numbers highlighted)")
    def narrative_checked(self, obj):
        return highlight_unmatched(obj.narrative, obj.unmatched_numbers)

    @admin.display(description="unmatched numbers")
    def unmatched_list(self, obj):
        if not obj.unmatched_numbers:
            return "—"
        return format_html_join(
            ", ",
            "<mark>{}</mark> ({})",
            ((n["text"], reason_label(n.get("reason", ""))) for n in obj.unmatched_numbers),
        )

    @admin.display(description="prompt (as sent)")
    def prompt_text(self, obj):
        return _pre(obj.prompt)

    @admin.display(description="response (as received)")
    def response_text(self, obj):
        return _pre(obj.response)
