"""The effective catalog as an immutable in-memory snapshot, one per process.

`get_active_catalog()` costs one indexed query (the catalog version) when
nothing changed; after any change, the next call in every process rebuilds.
"""

import threading
from dataclasses import dataclass, field

from common.identifiers import PROCEDURE_PREFIX, normalize_package_key, requested_package_key
from knowledge.markdown import extract_wikilinks
from knowledge.models import Package, RevisionSearchTerms, SynonymSet
from knowledge.selectors import catalog_version_get


@dataclass(frozen=True)
class PackageEntry:
    package_id: str
    title: str
    summary: str
    kind: str
    strict: bool
    aliases: tuple[str, ...]
    keywords: tuple[str, ...]
    semantic_ids: tuple[str, ...]
    source: str
    body: str
    revision: int
    # Accepted English/Spanish search terms of this revision (knowledge/search_terms.py).
    search_terms: tuple[str, ...] = ()

    @property
    def is_procedure(self) -> bool:
        return self.kind == "procedure"


@dataclass(frozen=True)
class Catalog:
    version: int
    entries: tuple[PackageEntry, ...]
    # Curators' synonym sets, applied to questions by the router.
    synonyms: tuple[tuple[str, ...], ...] = ()
    _by_key: dict[str, PackageEntry] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, version: int, entries: list[PackageEntry], synonyms=()) -> "Catalog":
        by_key: dict[str, PackageEntry] = {}
        for entry in entries:
            by_key[normalize_package_key(entry.package_id)] = entry
        for entry in entries:
            for alias in entry.aliases:
                by_key.setdefault(normalize_package_key(alias), entry)
        return cls(version=version, entries=tuple(entries), synonyms=tuple(tuple(s) for s in synonyms), _by_key=by_key)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def ids(self) -> list[str]:
        return [e.package_id for e in self.entries]

    def get(self, package_id: str) -> PackageEntry | None:
        entry = self._by_key.get(normalize_package_key(package_id or ""))
        return entry if entry is not None and entry.package_id == package_id else None

    def resolve(self, requested: object) -> PackageEntry | None:
        """An active package by ID or alias (accents, case, separators ignored; '::' allowed)."""
        key = requested_package_key(requested)
        return self._by_key.get(key) if key else None

    def render(self) -> str:
        """The compact catalog for prompts: one line per package, in catalog order."""
        lines = []
        for e in self.entries:
            name = f"{PROCEDURE_PREFIX}{e.package_id}" if e.is_procedure else e.package_id
            lines.append(f"- {name} — {e.title}: {e.summary}")
        return "\n".join(lines)


_lock = threading.Lock()
_cached: Catalog | None = None


def _load(version: int) -> Catalog:
    rows = list(Package.objects.filter(is_active=True).order_by("position", "package_id"))
    accepted = {
        (package_pk, number): tuple(terms)
        for package_pk, number, terms in RevisionSearchTerms.objects.filter(
            status=RevisionSearchTerms.Status.ACCEPTED, revision__package__in=rows
        ).values_list("revision__package_id", "revision__number", "accepted")
    }
    entries = [
        PackageEntry(
            package_id=p.package_id,
            title=p.title,
            summary=p.summary,
            kind=p.kind,
            strict=p.strict,
            aliases=tuple(p.aliases),
            keywords=tuple(p.keywords),
            semantic_ids=tuple(p.semantic_ids),
            source=p.source,
            body=p.body,
            revision=p.revision_number,
            search_terms=accepted.get((p.pk, p.revision_number), ()),
        )
        for p in rows
        if p.body.strip()
    ]
    synonyms = [tuple(terms) for terms in SynonymSet.objects.filter(is_active=True).values_list("terms", flat=True)]
    return Catalog.build(version, entries, synonyms)


def get_active_catalog() -> Catalog:
    global _cached
    # Read the version before the rows: a catalog is never labelled newer than its content.
    version = catalog_version_get()
    catalog = _cached
    if catalog is not None and catalog.version == version:
        return catalog
    with _lock:
        if _cached is not None and _cached.version == version:
            return _cached
        _cached = _load(version)
        return _cached


def clear_catalog_cache() -> None:
    global _cached
    with _lock:
        _cached = None


def package_wikilinks_unresolved(*, body: str) -> list[tuple[str, str]]:
    """Wiki-link targets of a body that the active catalog cannot resolve, with why.

    Returns (target, "inactive" | "unknown") in order of first appearance; a link
    may name a package by ID or alias, as agents do.
    """
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
