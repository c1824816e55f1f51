from django.contrib import admin

from knowledge.models import CatalogState, Package, PackageRevision


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


@admin.register(CatalogState)
class CatalogStateAdmin(admin.ModelAdmin):
    list_display = ["version", "updated_at"]
    readonly_fields = ["version", "updated_at"]
