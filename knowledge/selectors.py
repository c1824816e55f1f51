from django.db.models import QuerySet

from knowledge.models import CatalogState, Package, PackageRevision


def catalog_version_get() -> int:
    version = CatalogState.objects.filter(pk=1).values_list("version", flat=True).first()
    return version or 0


def package_list(*, active_only: bool = True) -> QuerySet[Package]:
    qs = Package.objects.order_by("position", "package_id")
    return qs.filter(is_active=True) if active_only else qs


def package_revisions(*, package: Package) -> QuerySet[PackageRevision]:
    return package.revisions.select_related("author").order_by("-number")
