"""Admin for the semantic registry, accessible entities and (read-only) snapshots."""

from django import forms
from django.contrib import admin, messages

from .models import AccessibleEntity, ContextSnapshot, SemanticElement
from .services import SemanticRegistryFileError, semantic_registry_import


class RegistryImportForm(forms.Form):
    file = forms.FileField(help_text="YAML or JSON: a list of {id, label, type, parent, description, packages}.")


@admin.register(SemanticElement)
class SemanticElementAdmin(admin.ModelAdmin):
    list_display = ["semantic_id", "label", "type", "parent", "package_ids", "updated_at"]
    list_filter = ["type"]
    search_fields = ["semantic_id", "label", "description"]
    readonly_fields = ["created_at", "updated_at"]
    change_list_template = "admin/conversations/semanticelement/change_list.html"

    def get_urls(self):
        from django.urls import path

        return [
            path("import/", self.admin_site.admin_view(self.import_view), name="conversations_semanticelement_import")
        ] + super().get_urls()

    def import_view(self, request):
        from django.shortcuts import redirect
        from django.template.response import TemplateResponse

        if not self.has_add_permission(request) or not self.has_change_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        form = RegistryImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            raw = form.cleaned_data["file"].read()
            try:
                counts = semantic_registry_import(acting_user=request.user, text=raw.decode("utf-8"))
            except (SemanticRegistryFileError, UnicodeDecodeError) as exc:
                self.message_user(request, f"Import failed: {exc}", level=messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"Imported: {counts['created']} created, {counts['updated']} updated, "
                    f"{counts['unchanged']} unchanged.",
                    level=messages.SUCCESS,
                )
                return redirect("admin:conversations_semanticelement_changelist")
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "opts": self.model._meta,
            "title": "Import semantic ids",
        }
        return TemplateResponse(request, "admin/conversations/semanticelement/import.html", context)


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
