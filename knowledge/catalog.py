"""The effective catalog as an immutable in-memory snapshot, one per process.

`get_active_catalog()` costs one indexed query (the catalog version) when
nothing changed. After a change, the next call in every process reloads it
*incrementally* (``_reload``): one light query lists every active package's
(pk, position, revision, content hash, updated_at) — no bodies — and only the
packages whose row changed are read whole, with their accepted search terms
and vectors; the rest of the entries are the previous snapshot's objects. A
change of accepted search terms or of stored vectors without a package change
(a curator's acceptance, an embedding that arrives later) is seen through an
aggregate fingerprint of those tables and re-reads only them (never a body).
"""

import dataclasses
import itertools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from common.identifiers import PROCEDURE_PREFIX, normalize_package_key, requested_package_key
from knowledge.markdown import extract_wikilinks
from django.db.models import CharField, Count, F, Max
from django.db.models.functions import Cast

from knowledge.retrieval.index import entries_digest
from knowledge.models import OutOfScopeSet, Package, RevisionEmbedding, RevisionSearchTerms, SynonymSet
from knowledge.selectors import catalog_version_get


# A key normalize_package_key returns unchanged (IDs as the catalog stores them, most aliases):
# matching it is ~10x cheaper than normalizing, which a reload of 100,000 entries notices.
_CANONICAL_KEY_RE = re.compile(r"[A-Z0-9]+(?:_[A-Z0-9]+)*")


def _key(name: str) -> str:
    return name if _CANONICAL_KEY_RE.fullmatch(name) else normalize_package_key(name)


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
    # Accepted example questions of this revision (their words: the router's "questions" signal).
    example_questions: tuple[str, ...] = ()

    @property
    def is_procedure(self) -> bool:
        return self.kind == "procedure"


@dataclass(frozen=True)
class Catalog:
    version: int
    entries: tuple[PackageEntry, ...]
    # Curators' synonym sets, applied to questions by the router.
    synonyms: tuple[tuple[str, ...], ...] = ()
    # Curators' active out-of-scope questions (OutOfScopeSet), a background of the catalog's own.
    out_of_scope: tuple[str, ...] = ()
    # package_id → stored passage vector of its current revision (float32 bytes, or an equal byte view
    # into the router's dense matrix once it holds them: ``hold_vectors``; common/text/retrieval_embeddings.py).
    vectors: dict[str, bytes | memoryview] = field(default_factory=dict, repr=False, compare=False)
    # package_id → its current revision's example-question vectors (float32 bytes, read with the
    # vectors, or an equal byte view into the router's dense index once it holds them: ``hold_vectors``;
    # only packages with accepted example questions have any; knowledge/embeddings.py).
    example_vectors: dict[str, bytes | memoryview] = field(default_factory=dict, repr=False, compare=False)
    _by_key: dict[str, PackageEntry] = field(default_factory=dict, repr=False, compare=False)
    # What an incremental reload compares against (``_reload``); None for a catalog built otherwise.
    _state: "_LoadState | None" = field(default=None, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        version: int,
        entries: list[PackageEntry],
        synonyms=(),
        vectors=None,
        _state=None,
        example_vectors=None,
        out_of_scope=(),
    ) -> "Catalog":
        by_key: dict[str, PackageEntry] = {}
        for entry in entries:
            by_key[_key(entry.package_id)] = entry
        for entry in entries:
            for alias in entry.aliases:
                by_key.setdefault(_key(alias), entry)
        return cls(
            version=version,
            entries=tuple(entries),
            synonyms=tuple(tuple(s) for s in synonyms),
            out_of_scope=tuple(out_of_scope),
            vectors=dict(vectors or {}),
            example_vectors=dict(example_vectors or {}),
            _by_key=by_key,
            _state=_state,
        )

    def __len__(self) -> int:
        return len(self.entries)

    def hold_vectors(self, rows: dict[str, memoryview], examples: dict[str, memoryview] | None = None) -> None:
        """Keep ``rows`` (equal byte views into a dense index's matrix) as these packages' vectors, and
        ``examples`` (equal byte views into its example rows) as their example-question vectors.

        The router's dense index holds every vector already (a shared mapping, or one matrix in
        this process); the catalog then keeps views into it instead of a second copy. Each dict is
        replaced whole (one reference assignment): a reader sees the old one or the new one."""
        held = dict(self.vectors)
        held.update((pid, row) for pid, row in rows.items() if pid in held)
        object.__setattr__(self, "vectors", held)
        if examples:
            asked = dict(self.example_vectors)
            asked.update((pid, view) for pid, view in examples.items() if pid in asked)
            object.__setattr__(self, "example_vectors", asked)

    @cached_property
    def content_digest(self) -> str:
        """``entries_digest`` of the entries (what names the shared segment), taken once per snapshot: the
        compaction's wait for the worker's segment and the build that maps it both need it (~0.6 s at 100k)."""
        return entries_digest(self.entries)

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


# More changed packages than this share of the catalog (or than RELOAD_MAX_CHANGED): a full load.
RELOAD_MAX_CHANGED = 2000
RELOAD_MAX_SHARE = 0.25


@dataclass(frozen=True)
class _LoadState:
    """Per active package pk: its row stamp, and its entry (None: an empty body, not in the catalog)."""

    stamps: dict[int, tuple]
    entries: dict[int, "PackageEntry | None"]
    package_ids: dict[int, str]
    terms_fingerprint: tuple
    vectors_fingerprint: tuple


def _entry(p: Package, accepted: dict) -> PackageEntry | None:
    if not p.body.strip():
        return None
    return PackageEntry(
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
        **accepted.get((p.pk, p.revision_number), {}),
    )


def _accepted_terms(package_pks=None) -> dict[tuple[int, int], dict[str, tuple[str, ...]]]:
    """(package pk, revision number) → the accepted search terms and example questions of the current
    revisions (of ``package_pks``), as ``PackageEntry`` fields (``search_terms``, ``example_questions``)."""
    rows = RevisionSearchTerms.objects.filter(
        status=RevisionSearchTerms.Status.ACCEPTED, revision__number=F("revision__package__revision_number")
    )
    rows = (
        rows.filter(revision__package__is_active=True)
        if package_pks is None
        else rows.filter(revision__package__in=package_pks)
    )
    return {
        (package_pk, number): {"search_terms": tuple(terms), "example_questions": tuple(questions or ())}
        for package_pk, number, terms, questions in rows.values_list(
            "revision__package_id", "revision__number", "accepted", "accepted_questions"
        )
    }


def _terms_fingerprint() -> tuple:
    found = RevisionSearchTerms.objects.filter(status=RevisionSearchTerms.Status.ACCEPTED).aggregate(
        n=Count("pk"), last=Max("updated_at")
    )
    return (found["n"], found["last"])


def _vectors_fingerprint() -> tuple:
    from common.text import retrieval_embeddings

    # A vector is written as a new row, never updated in place (knowledge/retrieval_embeddings._store): a new or
    # re-embedded revision moves the last id, a removed row the count.
    found = RevisionEmbedding.objects.filter(model_id=retrieval_embeddings.MODEL_ID).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    return (found["n"], found["last"])


def _stamp(revision_number, content_hash, updated_at, position) -> tuple:
    return (revision_number, content_hash, updated_at, position)


# updated_at as the database's text: parsing 100,000 timestamps into datetimes costs ~0.5 s.
_STAMP_AT = Cast("updated_at", output_field=CharField())


def _load(version: int) -> Catalog:
    """The whole catalog from the database (a process's first load, or after many changes)."""
    from knowledge.embeddings import catalog_vectors

    terms_fingerprint, vectors_fingerprint = _terms_fingerprint(), _vectors_fingerprint()
    rows = list(Package.objects.filter(is_active=True).annotate(stamp_at=_STAMP_AT).order_by("position", "package_id"))
    accepted = _accepted_terms(rows)
    by_pk = {p.pk: _entry(p, accepted) for p in rows}
    state = _LoadState(
        stamps={p.pk: _stamp(p.revision_number, p.content_hash, p.stamp_at, p.position) for p in rows},
        entries=by_pk,
        package_ids={p.pk: p.package_id for p in rows},
        terms_fingerprint=terms_fingerprint,
        vectors_fingerprint=vectors_fingerprint,
    )
    entries = [e for e in by_pk.values() if e is not None]
    examples: dict[str, bytes] = {}
    vectors = catalog_vectors(rows, examples)
    return Catalog.build(
        version, entries, _synonyms(), vectors, _state=state, example_vectors=examples, out_of_scope=_out_of_scope()
    )


def catalog_entries_stream(batch: int = 2000) -> Iterator[PackageEntry]:
    """The active catalog's entries, in the catalog's order, read from the database a batch at a time and
    never held (``index_store.router_index_prepare`` writes the segment from them). The same entries
    ``get_active_catalog().entries`` holds for unchanged rows; a change while they are read is caught by
    the reader (the digest of what it read no longer matches)."""
    rows = Package.objects.filter(is_active=True).order_by("position", "package_id").iterator(chunk_size=batch)
    while chunk := list(itertools.islice(rows, batch)):
        accepted = _accepted_terms([p.pk for p in chunk])
        for p in chunk:
            entry = _entry(p, accepted)
            if entry is not None:
                yield entry


def catalog_synonyms() -> tuple[tuple[str, ...], ...]:
    """The curators' active synonym sets, as ``Catalog.synonyms`` holds them."""
    return tuple(tuple(s) for s in _synonyms())


def _out_of_scope() -> tuple[str, ...]:
    """Every active out-of-scope set's questions, in the sets' order, each question once."""
    rows = OutOfScopeSet.objects.filter(is_active=True).order_by("name").values_list("questions", flat=True)
    return tuple(dict.fromkeys(q for questions in rows for q in questions))


def _synonyms() -> list[tuple[str, ...]]:
    return [tuple(terms) for terms in SynonymSet.objects.filter(is_active=True).values_list("terms", flat=True)]


def _vectors_since(before: tuple, now: tuple, by_pk: dict, package_ids: dict, vectors: dict, examples: dict) -> dict:
    """Vectors after some arrived for unchanged packages (embeddings are computed after a save);
    ``examples`` (the example-question vectors) is brought up to date in place.

    Writers of vectors hold the catalog state's row lock, so rows are added in id order: the rows
    after the last id seen are the new ones. Any other change (a row removed): every vector again.
    """
    from common.text import retrieval_embeddings
    from knowledge.embeddings import catalog_vectors

    rows = list(
        RevisionEmbedding.objects.filter(model_id=retrieval_embeddings.MODEL_ID, pk__gt=before[1] or 0).values_list(
            "revision__package_id", "revision__number", "vector", "example_vectors"
        )
    )
    if before[0] is None or now[0] - before[0] != len(rows):
        stubs = [Package(pk=pk, package_id=package_ids[pk]) for pk, e in by_pk.items() if e is not None]
        examples.clear()
        return catalog_vectors(stubs, examples)
    for package_pk, number, vector, example_rows in rows:
        entry = by_pk.get(package_pk)
        if entry is not None and entry.revision == number:  # a current revision's vector only
            vectors[entry.package_id] = bytes(vector)
            if example_rows:
                examples[entry.package_id] = bytes(example_rows)
            else:
                examples.pop(entry.package_id, None)
    return vectors


def _reload(version: int, previous: Catalog) -> Catalog:
    """The catalog after a change, reading whole only the packages whose row changed (see the module doc).

    Queries: the fingerprints of accepted search terms and of vectors (2), the light list of active
    packages (1), the changed packages whole with their accepted terms and vectors (3, none when
    nothing changed), the synonyms and the out-of-scope sets (2); the fingerprints' tables again only when they moved.
    """
    from knowledge.embeddings import catalog_vectors

    state = previous._state
    if state is None:
        return _load(version)
    terms_fingerprint, vectors_fingerprint = _terms_fingerprint(), _vectors_fingerprint()
    listed = list(
        Package.objects.filter(is_active=True)
        .order_by("position", "package_id")
        .values_list("pk", "package_id", "revision_number", "content_hash", _STAMP_AT, "position")
    )
    stamps = {pk: _stamp(number, digest, updated, position) for pk, _, number, digest, updated, position in listed}
    changed = [pk for pk, stamp in stamps.items() if state.stamps.get(pk) != stamp]
    if len(changed) > min(RELOAD_MAX_CHANGED, RELOAD_MAX_SHARE * max(len(listed), 1)):
        return _load(version)
    by_pk = {pk: state.entries[pk] for pk in stamps if pk not in changed}
    vectors = {pid: v for pid, v in previous.vectors.items()}
    examples = dict(previous.example_vectors)
    for pk in state.stamps.keys() - stamps.keys():  # gone (deactivated or deleted)
        vectors.pop(state.package_ids[pk], None)
        examples.pop(state.package_ids[pk], None)
    if changed:
        rows = list(Package.objects.filter(pk__in=changed))
        accepted = _accepted_terms(rows)
        for p in rows:
            by_pk[p.pk] = _entry(p, accepted)
            for pid in {state.package_ids.get(p.pk, p.package_id), p.package_id}:
                vectors.pop(pid, None)
                examples.pop(pid, None)
        vectors.update(catalog_vectors(rows, examples))
    package_ids = {pk: pid for pk, pid, *_ in listed}
    if terms_fingerprint != state.terms_fingerprint:
        # Accepted terms or questions changed without a package row (a curator's decision): those only, never a body.
        accepted = _accepted_terms()
        for pk, entry in by_pk.items():
            if entry is not None:
                fields = accepted.get((pk, entry.revision), {})
                terms, questions = fields.get("search_terms", ()), fields.get("example_questions", ())
                if terms != entry.search_terms or questions != entry.example_questions:
                    by_pk[pk] = dataclasses.replace(entry, search_terms=terms, example_questions=questions)
    if vectors_fingerprint != state.vectors_fingerprint:
        vectors = _vectors_since(state.vectors_fingerprint, vectors_fingerprint, by_pk, package_ids, vectors, examples)
    entries = [by_pk[pk] for pk, *_ in listed if by_pk[pk] is not None]
    new_state = _LoadState(
        stamps=stamps,
        entries={pk: by_pk[pk] for pk, *_ in listed},
        package_ids=package_ids,
        terms_fingerprint=terms_fingerprint,
        vectors_fingerprint=vectors_fingerprint,
    )
    live = {e.package_id for e in entries}
    return Catalog.build(
        version,
        entries,
        _synonyms(),
        {k: v for k, v in vectors.items() if k in live},
        _state=new_state,
        example_vectors={k: v for k, v in examples.items() if k in live},
        out_of_scope=_out_of_scope(),
    )


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
        _cached = _load(version) if _cached is None else _reload(version, _cached)
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
