from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from common.exceptions import ApplicationError
from conversations.models import Agent, Handoff, Message, MessageFeedback, Session
from conversations.services import handoff_resolve, session_close


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "provider",
        "model",
        "ontology",
        "number_policy",
        "is_active",
        "is_default",
        "updated_at",
    ]
    list_filter = ["is_active", "provider", "ontology", "number_policy"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at", "updated_at"]


class MessageInline(admin.TabularInline):
    model = Message
    extra = 0
    can_delete = False
    fields = [
        "created_at",
        "role",
        "status",
        "text",
        "grounding",
        "packages",
        "llm_calls",
        "context_enrichments",
        "timings_ms",
    ]
    readonly_fields = fields
    ordering = ["created_at", "id"]
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


class HandoffInline(admin.TabularInline):
    model = Handoff
    extra = 0
    can_delete = False
    fields = ["created_at", "reason", "detail", "message", "resolved_by", "resolved_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ["id", "tenant", "user", "agent", "status", "context_enrichment_count", "created_at"]
    list_filter = ["status", "agent", "tenant"]
    list_select_related = ["tenant", "user", "agent"]
    search_fields = ["id", "user__username", "tenant__slug"]
    readonly_fields = [
        "tenant",
        "user",
        "agent",
        "status",
        "collected_packages",
        "context_enrichment_count",
        "created_at",
        "updated_at",
    ]
    inlines = [MessageInline, HandoffInline]
    actions = ["close_sessions"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=_("Close selected sessions"), permissions=["change"])
    def close_sessions(self, request, queryset):
        closed = 0
        for session in queryset:
            try:
                session_close(acting_user=request.user, session=session)
                closed += 1
            except ApplicationError as exc:
                self.message_user(request, f"Session {session.pk}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{closed} session(s) closed.", messages.SUCCESS)


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["id", "session", "role", "status", "llm_calls", "context_enrichments", "created_at"]
    list_filter = ["role", "status"]
    list_select_related = ["session"]
    readonly_fields = [f.name for f in Message._meta.fields]

    def has_add_permission(self, request):
        return False


class HandoffStateFilter(admin.SimpleListFilter):
    """The queue opens on what still needs a person."""

    title = _("state")
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("open", _("Open")), ("resolved", _("Resolved")), ("all", _("All"))]

    def choices(self, changelist):
        value = self.value() or "open"
        for lookup, title in self.lookup_choices:
            yield {
                "selected": value == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(self, request, queryset):
        value = self.value() or "open"
        if value == "open":
            return queryset.filter(resolved_at__isnull=True)
        if value == "resolved":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


@admin.register(Handoff)
class HandoffAdmin(admin.ModelAdmin):
    """The hand-off queue: open hand-offs first, filter by reason, mark resolved."""

    list_display = [
        "id",
        "created_at",
        "reason_code",
        "reason",
        "detail",
        "session",
        "tenant",
        "resolved_at",
        "resolved_by",
    ]
    list_filter = [HandoffStateFilter, "reason"]
    list_select_related = ["session", "session__tenant", "resolved_by"]
    search_fields = ["session__id", "detail"]
    ordering = ["created_at", "id"]
    readonly_fields = ["session", "message", "reason", "detail", "resolved_by", "resolved_at", "created_at"]
    actions = ["mark_resolved"]

    def has_add_permission(self, request):
        return False

    @admin.display(description=_("tenant"), ordering="session__tenant__slug")
    def tenant(self, obj):
        return obj.session.tenant

    # The stable code the API returns (handoff.reason), so operators and API clients speak alike.
    @admin.display(description=_("reason code"), ordering="reason")
    def reason_code(self, obj):
        return obj.reason

    @admin.action(description=_("Mark selected hand-offs resolved"), permissions=["change"])
    def mark_resolved(self, request, queryset):
        resolved = 0
        for handoff in queryset:
            try:
                handoff_resolve(acting_user=request.user, handoff=handoff)
                resolved += 1
            except ApplicationError as exc:
                self.message_user(request, f"Hand-off {handoff.pk}: {exc.message}", messages.ERROR)
        self.message_user(request, f"{resolved} hand-off(s) marked resolved.", messages.SUCCESS)


# The UI-context engine's admin (semantic registry, accessible entities, snapshots).
import conversations.context.admin  # noqa: E402,F401


@admin.register(MessageFeedback)
class MessageFeedbackAdmin(admin.ModelAdmin):
    list_display = ["created_at", "tenant", "message", "user", "rating", "policy_version"]
    list_filter = ["rating"]
    list_select_related = ["tenant", "user", "message"]
    readonly_fields = [f.name for f in MessageFeedback._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
