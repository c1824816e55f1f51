from django.db.models import QuerySet

from common.identifiers import normalize_package_key
from knowledge.markdown import extract_wikilinks
from knowledge.models import CatalogState, Package, PackageRevision


def catalog_version_get() -> int:
    version = CatalogState.objects.filter(pk=1).values_list("version", flat=True).first()
    return version or 0


def package_revisions(*, package: Package) -> QuerySet[PackageRevision]:
    return package.revisions.select_related("author").order_by("-number")


def package_revision_get(*, package: Package, number: int) -> PackageRevision | None:
    return package.revisions.select_related("author").filter(number=number).first()


def package_wikilinks_unresolved(*, body: str) -> list[tuple[str, str]]:
    """Wiki-link targets of a body that the active catalog cannot resolve, with why.

    Returns (target, "inactive" | "unknown") in order of first appearance; a link
    may name a package by ID or alias, as agents do.
    """
    from knowledge.catalog import get_active_catalog  # the catalog module imports this one

    catalog = get_active_catalog()
    missing = [target for target in extract_wikilinks(body) if catalog.resolve(target) is None]
    if not missing:
        return []
    inactive = set(
        Package.objects.filter(is_active=False, package_id__in=[normalize_package_key(t) for t in missing]).values_list(
            "package_id", flat=True
        )
    )
    return [(t, "inactive" if normalize_package_key(t) in inactive else "unknown") for t in missing]
