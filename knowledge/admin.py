from django.contrib import admin
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone

from knowledge.feedback import half_life_seconds
from knowledge.models import CatalogState, FetchFeedback, Package, PackageRevision


class PackageRevisionInline(admin.TabularInline):
    model = PackageRevision
    extra = 0
    can_delete = False
    fields = ["number", "action", "author", "note", "created_at", "content_hash"]
    readonly_fields = fields
    ordering = ["-number"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Package)
class PackageAdmin(admin.ModelAdmin):
    list_display = ["package_id", "title", "kind", "origin", "is_active", "is_overridden", "revision_number"]
    list_filter = ["kind", "origin", "is_active", "is_overridden"]
    search_fields = ["package_id", "title", "summary", "body"]
    readonly_fields = ["origin", "is_overridden", "revision_number", "content_hash", "created_at", "updated_at"]
    inlines = [PackageRevisionInline]

    def get_urls(self):
        custom = [
            path(
                "retrieval-test/",
                self.admin_site.admin_view(self.retrieval_test_view),
                name="knowledge_package_retrieval_test",
            )
        ]
        return custom + super().get_urls()

    def retrieval_test_view(self, request):
        """A curator types a question (and a semantic ID) and sees what would be delivered, and why."""
        from knowledge.admin_forms import RetrievalTestForm
        from knowledge.router import route_context

        if not self.has_view_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        form = RetrievalTestForm(request.GET or None)
        result = None
        if form.is_valid():
            data = form.cleaned_data
            result = route_context(
                message=data["message"],
                semantic_context={
                    "focus": data.get("focus") or None,
                    "parents": data.get("parents") or [],
                    "page": data.get("page") or None,
                },
                budget_tokens=data.get("budget_tokens"),
                max_full=data.get("max_full"),
                use_cache=False,
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Retrieval test",
            "form": form,
            "result": result,
        }
        return TemplateResponse(request, "admin/knowledge/package/retrieval_test.html", context)


@admin.register(CatalogState)
class CatalogStateAdmin(admin.ModelAdmin):
    list_display = ["version", "updated_at"]
    readonly_fields = ["version", "updated_at"]


@admin.register(FetchFeedback)
class FetchFeedbackAdmin(admin.ModelAdmin):
    """What the router learnt from fetches; the weight decays with the half-life setting."""

    list_display = ["package_id", "query_key", "tenant", "listed_then_fetched", "current_weight", "last_fetched_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    search_fields = ["package_id", "query_key"]
    readonly_fields = ["query_key", "package_id", "tenant", "listed_then_fetched", "weight", "last_fetched_at", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="weight now")
    def current_weight(self, obj: FetchFeedback) -> str:
        return f"{obj.weight_at(timezone.now(), half_life_seconds()):.2f}"
