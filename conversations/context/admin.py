"""Admin for the semantic registry, accessible entities and (read-only) snapshots."""

from django.contrib import admin
from django.urls import path

from common.registry_import import registry_import_view

from .models import AccessibleEntity, ContextSnapshot, SemanticElement
from .services import SemanticRegistryFileError, semantic_registry_import


@admin.register(SemanticElement)
class SemanticElementAdmin(admin.ModelAdmin):
    list_display = ["semantic_id", "label", "type", "parent", "package_ids", "updated_at"]
    list_filter = ["type"]
    search_fields = ["semantic_id", "label", "description"]
    readonly_fields = ["created_at", "updated_at"]
    change_list_template = "admin/conversations/semanticelement/change_list.html"

    def get_urls(self):
        return [
            path("import/", self.admin_site.admin_view(self.import_view), name="conversations_semanticelement_import")
        ] + super().get_urls()

    def import_view(self, request):
        return registry_import_view(
            self,
            request,
            importer=semantic_registry_import,
            file_error=SemanticRegistryFileError,
            help_text="YAML or JSON: a list of {id, label, type, parent, description, packages}.",
            title="Import semantic ids",
            template="admin/conversations/semanticelement/import.html",
            changelist="admin:conversations_semanticelement_changelist",
        )


@admin.register(AccessibleEntity)
class AccessibleEntityAdmin(admin.ModelAdmin):
    list_display = ["entity_type", "entity_id", "tenant", "created_by", "created_at"]
    list_filter = ["tenant", "entity_type"]
    search_fields = ["entity_type", "entity_id"]
    list_select_related = ["tenant", "created_by"]
    readonly_fields = ["created_by", "created_at"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(ContextSnapshot)
class ContextSnapshotAdmin(admin.ModelAdmin):
    """Snapshots are evidence of what a turn saw: read-only."""

    list_display = ["id", "session", "tenant", "version", "size", "redacted_count", "captured_at", "created_at"]
    list_filter = ["tenant"]
    search_fields = ["sha256"]
    list_select_related = ["tenant", "session"]
    readonly_fields = [f.name for f in ContextSnapshot._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
