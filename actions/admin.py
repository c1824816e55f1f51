"""Admin: the capability registry (editable, importable), actions (read-only, operators retry
failed webhook executions) and the audit trail (read-only for everyone, auditors included)."""

from django.contrib import admin, messages
from django.urls import path

from actions.exceptions import ActionNotRetryableError, CapabilityFileError
from actions.models import Action, ActionAudit, ActionStatus, Capability
from actions.registry import capability_registry_import
from actions.services import action_retry
from common.registry_import import registry_import_view


@admin.register(Capability)
class CapabilityAdmin(admin.ModelAdmin):
    list_display = ["capability_id", "label", "intent", "execution", "requires_confirmation", "is_active", "updated_at"]
    list_filter = ["intent", "execution", "is_active", "requires_confirmation"]
    search_fields = ["capability_id", "label", "description"]
    readonly_fields = ["created_at", "updated_at"]
    change_list_template = "admin/actions/capability/change_list.html"

    def get_urls(self):
        return [
            path("import/", self.admin_site.admin_view(self.import_view), name="actions_capability_import")
        ] + super().get_urls()

    def import_view(self, request):
        return registry_import_view(
            self,
            request,
            importer=capability_registry_import,
            file_error=CapabilityFileError,
            help_text="YAML or JSON: a list of capabilities (see actions/demo/capabilities.yaml).",
            title="Import capabilities",
            template="admin/actions/capability/import.html",
            changelist="admin:actions_capability_changelist",
        )


@admin.register(Action)
class ActionAdmin(admin.ModelAdmin):
    """Actions are evidence and state: read-only; a failed webhook execution can be retried."""

    list_display = ["id", "capability", "status", "reason", "tenant", "attempts", "created_at"]
    list_filter = ["status", "tenant", "capability"]
    search_fields = ["id", "target"]
    list_select_related = ["capability", "tenant"]
    readonly_fields = [f.name for f in Action._meta.fields if f.name != "confirmation_token_hash"]
    exclude = ["confirmation_token_hash"]
    actions = ["retry_execution"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Retry the webhook execution (same idempotency key)", permissions=["retry"])
    def retry_execution(self, request, queryset):
        done = failed = 0
        for action in queryset.filter(status=ActionStatus.FAILED):
            try:
                action = action_retry(operator=request.user, action_id=action.pk)
            except ActionNotRetryableError as exc:
                self.message_user(request, f"{action.pk}: {exc.message}", level=messages.WARNING)
                continue
            if action.status == ActionStatus.VERIFIED:
                done += 1
            else:
                failed += 1
        self.message_user(request, f"Retried: {done} verified, {failed} failed again.", level=messages.INFO)

    def has_retry_permission(self, request):
        return request.user.has_perm("actions.retry_action")


@admin.register(ActionAudit)
class ActionAuditAdmin(admin.ModelAdmin):
    """Immutable receipts: nobody adds, edits or deletes them here (auditors read them)."""

    list_display = ["created_at", "step", "reason", "capability_id", "action_id", "tenant", "actor", "duration_ms"]
    list_filter = ["step", "reason", "tenant"]
    search_fields = ["action_id", "capability_id"]
    list_select_related = ["tenant", "actor"]
    readonly_fields = [f.name for f in ActionAudit._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
