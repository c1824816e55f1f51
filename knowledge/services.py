"""Writes to the knowledge catalog. Every saved change is a new revision.

All catalog writes lock the CatalogState row first: writes are serialized (so
alias uniqueness holds under concurrency) and each one bumps the version every
process compares with its in-memory catalog.
"""

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Max
from django.db.models.functions import Now

from knowledge.exceptions import InvalidPackageOperationError, PackageImportError, RevisionNotFoundError
from common.identifiers import PACKAGE_ID_RE, normalize_package_key
from knowledge.models import (
    CONTENT_FIELDS,
    CatalogState,
    OutOfScopeSet,
    Package,
    PackageOrigin,
    PackageRevision,
    RevisionSearchTerms,
    content_hash,
)
from knowledge.retrieval.dense import MAX_OUT_OF_SCOPE_QUESTIONS, MAX_OUT_OF_SCOPE_TOTAL, clean_questions
from knowledge.package_files import (
    PackageFile,
    PackageFileError,
    clean_package_content,
    package_files_in,
    parse_package_file,
    render_package_file,
)

logger = logging.getLogger(__name__)
Action = PackageRevision.Action


# --- internals -----------------------------------------------------------------


def _lock_catalog() -> CatalogState:
    CatalogState.objects.get_or_create(pk=1)
    return CatalogState.objects.select_for_update().get(pk=1)


def _bump_version(state: CatalogState) -> None:
    """``catalog_version_bump`` for a service that took the catalog lock (``state``, from ``_lock_catalog``)."""
    catalog_version_bump()


def catalog_version_bump() -> None:
    """Move the catalog version, inside the caller's transaction (which holds the catalog state's row lock):
    every process reloads on its next request. Once committed, the worker is asked to write the new
    content's shared index (``index_store.router_index_build_soon``: queued when a broker and
    ``KNOWLEDGE_INDEX_COMPACT_WAIT`` say so, once per burst of changes)."""
    CatalogState.objects.filter(pk=1).update(version=F("version") + 1)
    transaction.on_commit(_router_index_build_soon, robust=True)  # a queue that fails never fails the edit


def _router_index_build_soon() -> None:
    from knowledge.index_store import router_index_build_soon  # the router's modules import this one's models

    router_index_build_soon()


def _taken_keys(*, exclude_ids: set[str]) -> dict[str, str]:
    """Normalized ID/alias → package ID, for every package not excluded."""
    taken: dict[str, str] = {}
    for pid, aliases in Package.objects.exclude(package_id__in=exclude_ids).values_list("package_id", "aliases"):
        taken[normalize_package_key(pid)] = pid
        for alias in aliases:
            taken[normalize_package_key(alias)] = pid
    return taken


def _clean_aliases(package_id: str, aliases: list[str], taken: dict[str, str]) -> list[str]:
    own = normalize_package_key(package_id)
    cleaned: list[str] = []
    for alias in aliases:
        key = normalize_package_key(alias)
        if not key or not PACKAGE_ID_RE.match(key):
            raise ValidationError({"aliases": f"'{alias}' is not a valid alias (letters, digits, underscores)."})
        if key == own or key in cleaned:
            continue
        if key in taken:
            raise ValidationError({"aliases": f"Alias '{key}' already names package {taken[key]}."})
        cleaned.append(key)
    return cleaned


def package_content_clean(*, package_id: str, data: dict, taken: dict[str, str] | None = None) -> dict:
    """Validate content for a package; raises ValidationError naming the field."""
    if not isinstance(package_id, str) or not PACKAGE_ID_RE.match(package_id):
        raise ValidationError({"package_id": "Use UPPER_SNAKE_CASE, e.g. PRICING_RULES."})
    try:
        cleaned = clean_package_content(data)
    except PackageFileError as exc:
        raise ValidationError({exc.field: exc.message}) from exc
    if taken is None:
        taken = _taken_keys(exclude_ids={package_id})
    owner = taken.get(normalize_package_key(package_id))
    if owner is not None and owner != package_id:
        raise ValidationError({"package_id": f"'{package_id}' is already an alias of {owner}."})
    cleaned["aliases"] = _clean_aliases(package_id, cleaned["aliases"], taken)
    return cleaned


def _apply_content(package: Package, data: dict) -> None:
    for name in CONTENT_FIELDS:
        setattr(package, name, data[name])


def _write_revision(package: Package, *, action: str, acting_user, note: str) -> PackageRevision:
    package.revision_number += 1
    snapshot = {**package.content(), "is_active": package.is_active, "is_overridden": package.is_overridden}
    revision = PackageRevision(
        package=package,
        number=package.revision_number,
        action=action,
        data=snapshot,
        content_hash=content_hash(snapshot),
        author=acting_user if getattr(acting_user, "pk", None) else None,
        note=(note or "")[:500],
    )
    package.content_hash = revision.content_hash
    package.full_clean(exclude=["aliases", "keywords", "semantic_ids"])
    package.save()
    revision.save()
    logger.info(
        "knowledge.package_revision package_id=%s revision=%s action=%s", package.package_id, revision.number, action
    )
    from knowledge.search_terms import search_terms_request  # it imports the models this module writes

    search_terms_request(revision)
    from knowledge.embeddings import embedding_request

    embedding_request(revision)
    return revision


def _differs_from_bundled(package: Package) -> bool:
    return package.bundled_content is None or package.content() != {
        f: package.bundled_content.get(f) for f in CONTENT_FIELDS
    }


# Rows stamped per transaction by catalog_reload_everywhere: package edits wait for one batch
# (about 1,000 single-row updates, tens of milliseconds), not for the whole catalog.
RELOAD_EVERYWHERE_BATCH = 1000


def _stamp_batch(queryset, *, after_pk: int, batch_size: int) -> list[int]:
    """Move the stamp of the next ``batch_size`` rows of ``queryset`` past ``after_pk`` (by pk), in a
    transaction of its own under the catalog lock; the pks stamped (empty when none were left).

    Under the lock like every catalog write: the bundled sync locks every package row after taking
    it, so a batch that locked its rows first could deadlock with it."""
    with transaction.atomic():
        _lock_catalog()
        pks = list(queryset.filter(pk__gt=after_pk).order_by("pk").values_list("pk", flat=True)[:batch_size])
        if pks:
            queryset.filter(pk__in=pks).update(updated_at=Now())
    return pks


def catalog_reload_everywhere(*, batch_size: int = RELOAD_EVERYWHERE_BATCH) -> int:
    """Every process reads the whole catalog again on its next request (``manage.py reindex``).

    For edits made around the services and the ORM (raw SQL, a restored table): they moved no row
    stamp, so an incremental reload (knowledge/catalog.py) would keep the entries it holds. Moving
    every package's stamp makes each process's next reload read every row (a full load past
    ``RELOAD_MAX_SHARE``), and the accepted search terms' stamps move their fingerprint. Returns the
    number of packages stamped.

    In batches of ``batch_size`` rows, each its own transaction: the catalog lock is released
    between batches (at 100,000 packages one transaction held it, and every edit, for seconds).
    Safe because a stamp is not content: no batch changes what any row says. The version moves
    last, in its own transaction, and readers reload only when the version moves, so between
    batches every process keeps the catalog it had. A process that reloads in between (a
    concurrent edit moved the version) reads the stamped rows as changed, that is, their current
    content, which already holds the raw edit the reindex is for; the rows not yet stamped are
    read again after the final bump. Inside a caller's transaction the batches are savepoints and
    the lock is held to its end, as before.
    """
    stamped = 0
    for queryset in (
        Package.objects.all(),
        RevisionSearchTerms.objects.filter(status=RevisionSearchTerms.Status.ACCEPTED),
    ):
        after_pk = 0
        while pks := _stamp_batch(queryset, after_pk=after_pk, batch_size=batch_size):
            after_pk = pks[-1]
            if queryset.model is Package:
                stamped += len(pks)
    with transaction.atomic():
        _bump_version(_lock_catalog())
    return stamped


# --- single-package services -------------------------------------------------------


@transaction.atomic
def package_create(*, acting_user, package_id: str, data: dict, note: str = "", is_active: bool = True) -> Package:
    state = _lock_catalog()
    if Package.objects.filter(package_id=package_id).exists():
        raise ValidationError({"package_id": f"Package {package_id} already exists."})
    cleaned = package_content_clean(package_id=package_id, data=data)
    last = Package.objects.aggregate(m=Max("position"))["m"] or 0
    package = Package(package_id=package_id, origin=PackageOrigin.ADMIN, position=last + 10, is_active=is_active)
    _apply_content(package, cleaned)
    _write_revision(package, action=Action.CREATED, acting_user=acting_user, note=note)
    _bump_version(state)
    return package


@transaction.atomic
def package_update(
    *, acting_user, package: Package, data: dict, note: str = "", action: str = Action.EDITED
) -> Package:
    """Save new content. Editing a bundled package makes it an active override."""
    state = _lock_catalog()
    package = Package.objects.select_for_update().get(pk=package.pk)
    cleaned = package_content_clean(package_id=package.package_id, data=data)
    if cleaned == package.content():
        return package  # a no-op is a no-op: no revision, no version bump
    _apply_content(package, cleaned)
    if package.origin == PackageOrigin.BUNDLED:
        # An inactive bundled package stays an override: its deactivation is what hides the file.
        package.is_overridden = _differs_from_bundled(package) or not package.is_active
    _write_revision(package, action=action, acting_user=acting_user, note=note)
    _bump_version(state)
    return package


@transaction.atomic
def package_set_active(*, acting_user, package: Package, active: bool, note: str = "") -> Package:
    state = _lock_catalog()
    package = Package.objects.select_for_update().get(pk=package.pk)
    if package.is_active == active:
        return package
    # Only a sync hides a bundled package without overriding it: its file was removed.
    file_removed = package.origin == PackageOrigin.BUNDLED and not package.is_active and not package.is_overridden
    package.is_active = active
    if package.origin == PackageOrigin.BUNDLED and not active:
        # An inactive override hides the bundled package.
        package.is_overridden = True
    elif package.origin == PackageOrigin.BUNDLED:
        # Activating a package whose file is gone makes it an override that stands on its
        # own; otherwise the next sync would hide it again.
        package.is_overridden = file_removed or _differs_from_bundled(package)
    _write_revision(
        package, action=Action.ACTIVATED if active else Action.DEACTIVATED, acting_user=acting_user, note=note
    )
    _bump_version(state)
    return package


@transaction.atomic
def package_revert(*, acting_user, package: Package, number: int, note: str = "") -> Package:
    """Bring back the content of revision `number`, as a new revision."""
    revision = PackageRevision.objects.filter(package=package, number=number).first()
    if revision is None:
        raise RevisionNotFoundError(details={"package_id": package.package_id, "revision": number})
    data = {f: revision.data.get(f) for f in CONTENT_FIELDS}
    return package_update(
        acting_user=acting_user,
        package=package,
        data=data,
        note=note or f"Reverted to revision {number}",
        action=Action.REVERTED,
    )


@transaction.atomic
def package_reset_to_bundled(*, acting_user, package: Package, note: str = "") -> Package:
    """Drop the override: the bundled file's content, active again."""
    state = _lock_catalog()
    package = Package.objects.select_for_update().get(pk=package.pk)
    if package.origin != PackageOrigin.BUNDLED or package.bundled_content is None:
        raise InvalidPackageOperationError("Only bundled packages can be reset to their file.")
    if not package.is_overridden and not package.is_active:
        # Hidden by a sync because its file was removed: "resetting" would serve a stale copy
        # until the next sync hides it again.
        raise InvalidPackageOperationError(
            "The bundled file of this package was removed; activate it to keep it as an override."
        )
    if not package.is_overridden and package.is_active:
        return package
    bundled = {f: package.bundled_content.get(f) for f in CONTENT_FIELDS}
    bundled["aliases"] = _clean_aliases(
        package.package_id, bundled["aliases"], _taken_keys(exclude_ids={package.package_id})
    )
    _apply_content(package, bundled)
    package.is_overridden = False
    package.is_active = True
    _write_revision(package, action=Action.RESET, acting_user=acting_user, note=note or "Reset to bundled file")
    _bump_version(state)
    return package


# --- folders: bundled catalog, import, export ----------------------------------------


@dataclass
class FolderSummary:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deactivated: list[str] = field(default_factory=list)

    def as_line(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged, {len(self.deactivated)} deactivated"
        )


def _parse_folders(directories: list[Path]) -> list[PackageFile]:
    """Parse every file of the folders; collect all errors, raise them together."""
    errors: list[str] = []
    files: list[PackageFile] = []
    seen: dict[str, str] = {}
    for directory in directories:
        if not directory.is_dir():
            errors.append(f"{directory}: folder: not found")
            continue
        for path in package_files_in(directory):
            try:
                parsed = parse_package_file(path)
            except PackageFileError as exc:
                errors.append(str(exc))
                continue
            if parsed.package_id in seen:
                errors.append(f"{path}: id: {parsed.package_id} is also defined in {seen[parsed.package_id]}")
                continue
            seen[parsed.package_id] = str(path)
            files.append(parsed)
    # Aliases must be unique across the set and against packages outside it.
    taken = _taken_keys(exclude_ids={f.package_id for f in files})
    for parsed in files:
        taken.setdefault(normalize_package_key(parsed.package_id), parsed.package_id)
    for parsed in files:
        key = normalize_package_key(parsed.package_id)
        if taken.get(key) != parsed.package_id:
            errors.append(f"{parsed.path}: id: {parsed.package_id} is already an alias of {taken[key]}")
        try:
            parsed.data["aliases"] = _clean_aliases(parsed.package_id, parsed.data["aliases"], taken)
        except ValidationError as exc:
            errors.append(f"{parsed.path}: aliases: {exc.message_dict['aliases'][0]}")
            continue
        for alias in parsed.data["aliases"]:
            taken[alias] = parsed.package_id
    if errors:
        raise PackageImportError(errors)
    return files


@transaction.atomic
def catalog_sync_bundled(*, directories: list[Path] | None = None) -> FolderSummary:
    """Load the bundled Markdown catalog into the database.

    A package without an override follows its file; an override (edit or
    deactivation) is kept and only the stored bundled copy is refreshed. A
    bundled package whose file is gone leaves the catalog unless overridden.
    """
    directories = list(settings.KNOWLEDGE_CATALOG_DIRS if directories is None else directories)
    state = _lock_catalog()
    files = _parse_folders(directories)
    summary = FolderSummary()
    existing = {p.package_id: p for p in Package.objects.select_for_update()}
    for index, parsed in enumerate(files):
        position = (index + 1) * 10
        package = existing.get(parsed.package_id)
        if package is None:
            package = Package(package_id=parsed.package_id, origin=PackageOrigin.BUNDLED, position=position)
            package.bundled_content, package.bundled_path = parsed.data, parsed.path
            _apply_content(package, parsed.data)
            _write_revision(package, action=Action.BUNDLED_SYNC, acting_user=None, note=f"Loaded {parsed.path}")
            summary.created.append(parsed.package_id)
            continue
        changed_file = package.bundled_content != parsed.data or package.origin != PackageOrigin.BUNDLED
        if package.origin == PackageOrigin.ADMIN:
            # A curator's package that a new bundled file now names: the curator's content
            # (or deactivation) stays, as an override of that file.
            package.is_overridden = package.content() != parsed.data or not package.is_active
        package.origin, package.position = PackageOrigin.BUNDLED, position
        package.bundled_content, package.bundled_path = parsed.data, parsed.path
        file_returned = not package.is_overridden and not package.is_active
        if not package.is_overridden and (package.content() != parsed.data or file_returned):
            # Not overridden and inactive means hidden because its file was removed; it is back.
            package.is_active = True
            _apply_content(package, parsed.data)
            _write_revision(package, action=Action.BUNDLED_SYNC, acting_user=None, note=f"Loaded {parsed.path}")
            summary.updated.append(parsed.package_id)
        else:
            if package.is_overridden and package.is_active:
                package.is_overridden = _differs_from_bundled(package)
            package.save()
            (summary.updated if changed_file else summary.unchanged).append(parsed.package_id)
    loaded = {f.package_id for f in files}
    for package in existing.values():
        if package.origin == PackageOrigin.BUNDLED and package.package_id not in loaded and package.is_active:
            if package.is_overridden:
                continue  # an active override stands on its own
            package.is_active = False
            _write_revision(package, action=Action.DEACTIVATED, acting_user=None, note="Bundled file removed")
            summary.deactivated.append(package.package_id)
    if summary.created or summary.updated or summary.deactivated:
        _bump_version(state)
    logger.info("knowledge.catalog_sync %s", summary.as_line())
    return summary


def packages_import(*, acting_user, directory: Path, dry_run: bool = False, note: str = "") -> FolderSummary:
    """Import a folder of package files: all valid, or nothing written."""
    with transaction.atomic():
        files = _parse_folders([directory])
        summary = FolderSummary()
        writes: list[tuple[PackageFile, Package | None]] = []
        existing = {p.package_id: p for p in Package.objects.filter(package_id__in=[f.package_id for f in files])}
        for parsed in files:
            package = existing.get(parsed.package_id)
            if package is None:
                summary.created.append(parsed.package_id)
                if not dry_run:
                    writes.append((parsed, None))
            elif package.content() == parsed.data:
                summary.unchanged.append(parsed.package_id)
            else:
                summary.updated.append(parsed.package_id)
                if not dry_run:
                    writes.append((parsed, package))
        # Files were validated as a set; a write can still be refused (an alias moving from
        # one file's package to another's is checked against rows not yet rewritten). Refuse
        # the whole import then, naming the file and the field, never half of it.
        try:
            for parsed, package in writes:
                name = Path(parsed.path).name
                if package is None:
                    package_create(
                        acting_user=acting_user,
                        package_id=parsed.package_id,
                        data=parsed.data,
                        note=note or f"Imported {name}",
                    )
                else:
                    package_update(
                        acting_user=acting_user,
                        package=package,
                        data=parsed.data,
                        note=note or f"Imported {name}",
                        action=Action.IMPORTED,
                    )
        except ValidationError as exc:
            errors = [f"{parsed.path}: {name}: {msg}" for name, msgs in exc.message_dict.items() for msg in msgs]
            raise PackageImportError(errors) from exc
    return summary


def packages_export(*, directory: Path, include_inactive: bool = False, replace: bool = False) -> list[Path]:
    """Write one file per package, in catalog order, that imports back identically.

    Package files already in the folder would be imported along with the new ones
    (a package twice under an old position's name, a removed one back), so the folder
    must hold none; `replace` deletes them first.
    """
    directory.mkdir(parents=True, exist_ok=True)
    existing = package_files_in(directory)
    if existing and not replace:
        raise InvalidPackageOperationError(
            f"{directory} already holds {len(existing)} package files; export into an empty folder or replace them.",
            details={"directory": str(directory), "files": len(existing)},
        )
    for path in existing:
        path.unlink()
    packages = Package.objects.all() if include_inactive else Package.objects.filter(is_active=True)
    written: list[Path] = []
    for index, package in enumerate(packages.order_by("position", "package_id"), start=1):
        path = directory / f"{index:03d}_{package.package_id.lower()}.md"
        path.write_text(render_package_file(package.package_id, package.content()), encoding="utf-8")
        written.append(path)
    return written


# --- synonym sets ---------------------------------------------------------------


SYNONYM_TERM_MAX_LENGTH = 80
SYNONYM_SET_MAX_TERMS = 30


def synonym_terms_clean(raw) -> list[str]:
    """Comma- or newline-separated text (or a list) → distinct, trimmed terms; errors name the field."""
    if isinstance(raw, str):
        items = [t for line in raw.splitlines() for t in line.split(",")]
    elif isinstance(raw, (list, tuple)):
        items = [str(t) for t in raw]
    else:
        raise ValidationError("a list of words or a comma-separated text")
    terms: list[str] = []
    for item in items:
        term = " ".join(item.split())
        if term and term.lower() not in {t.lower() for t in terms}:
            if len(term) > SYNONYM_TERM_MAX_LENGTH:
                raise ValidationError(f"'{term[:20]}…' is longer than {SYNONYM_TERM_MAX_LENGTH} characters")
            terms.append(term)
    if len(terms) < 2:
        raise ValidationError("a synonym set needs at least two different terms")
    if len(terms) > SYNONYM_SET_MAX_TERMS:
        raise ValidationError(f"at most {SYNONYM_SET_MAX_TERMS} terms per set")
    return terms


def out_of_scope_questions_clean(raw) -> list[str]:
    """One question per line (or a list) → distinct, trimmed questions; errors name the bound."""
    try:
        questions = clean_questions(raw, limit=MAX_OUT_OF_SCOPE_QUESTIONS)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc
    if not questions:
        raise ValidationError("at least one question")
    return questions


def out_of_scope_total_check(out_of_scope_set) -> None:
    """ValidationError when, with ``out_of_scope_set`` saved, the active sets would hold more than
    ``MAX_OUT_OF_SCOPE_TOTAL`` questions in all (each is compared with every message)."""
    if not out_of_scope_set.is_active:
        return
    others = OutOfScopeSet.objects.filter(is_active=True)
    if out_of_scope_set.pk:
        others = others.exclude(pk=out_of_scope_set.pk)
    total = sum(len(q) for q in others.values_list("questions", flat=True)) + len(out_of_scope_set.questions or [])
    if total > MAX_OUT_OF_SCOPE_TOTAL:
        raise ValidationError(
            {"questions": [f"the active sets would hold more than {MAX_OUT_OF_SCOPE_TOTAL} questions in all"]}
        )


@transaction.atomic
def out_of_scope_set_save(*, out_of_scope_set, acting_user=None):
    """Validate and save a set of out-of-scope questions; the catalog version is bumped so every router
    index rebuilds with them (their vectors are computed once per machine, ``background.questions_matrix``)."""
    try:
        out_of_scope_set.questions = out_of_scope_questions_clean(out_of_scope_set.questions)
    except ValidationError as exc:
        raise ValidationError({"questions": exc.messages}) from exc
    out_of_scope_set.full_clean()
    state = _lock_catalog()
    out_of_scope_total_check(out_of_scope_set)
    out_of_scope_set.save()
    _bump_version(state)
    logger.info(
        "out_of_scope_set_saved id=%s questions=%d active=%s",
        out_of_scope_set.pk,
        len(out_of_scope_set.questions),
        out_of_scope_set.is_active,
    )
    return out_of_scope_set


@transaction.atomic
def synonym_set_save(*, synonym_set, acting_user=None):
    """Validate and save a synonym set; the catalog version is bumped so every router index rebuilds."""
    try:
        synonym_set.terms = synonym_terms_clean(synonym_set.terms)
    except ValidationError as exc:
        raise ValidationError({"terms": exc.messages}) from exc
    synonym_set.full_clean()
    state = _lock_catalog()
    synonym_set.save()
    _bump_version(state)
    logger.info(
        "synonym_set_saved id=%s terms=%d active=%s", synonym_set.pk, len(synonym_set.terms), synonym_set.is_active
    )
    return synonym_set
