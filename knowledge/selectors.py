from django.db.models import QuerySet

from knowledge.models import CatalogState, Package, PackageRevision


def catalog_version_get() -> int:
    version = CatalogState.objects.filter(pk=1).values_list("version", flat=True).first()
    return version or 0


def package_revisions(*, package: Package) -> QuerySet[PackageRevision]:
    return package.revisions.select_related("author").order_by("-number")


def package_revision_get(*, package: Package, number: int) -> PackageRevision | None:
    return package.revisions.select_related("author").filter(number=number).first()
