"""Chunk ingestion and curation: captured → classified → tagged → validated → indexed.

State changes go through ALLOWED_TRANSITIONS (a no-op is a no-op; an illegal move is
ILLEGAL_CHUNK_TRANSITION) and leave a ChunkEvent in the same transaction. High-criticality
classes are validated only by a curator holding ``ontology.validate_critical_chunk``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from jsonschema import Draft202012Validator

from ontology.exceptions import (
    ChunkInvalid,
    ChunkMetadataInvalid,
    CriticalValidationForbidden,
    IllegalChunkTransition,
    SchemaVersionNotFound,
)
from ontology.models import Chunk, ChunkEvent, ChunkState, MetadataSchema, OntologyClass
from ontology.routing.classifier import ClassProposal, propose_class
from ontology.selectors import VALIDATE_CRITICAL_PERM, current_metadata_schema

logger = logging.getLogger(__name__)
S = ChunkState

ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    S.CAPTURED: frozenset({S.CLASSIFIED}),
    S.CLASSIFIED: frozenset({S.TAGGED, S.CAPTURED}),
    S.TAGGED: frozenset({S.VALIDATED, S.CLASSIFIED}),
    S.VALIDATED: frozenset({S.INDEXED, S.TAGGED}),
    S.INDEXED: frozenset({S.TAGGED}),
}
CHUNK_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,119}$")
MAX_TEXT_CHARS = 20_000
RECORD_FIELDS = ("chunk_id", "texto")


# --- metadata schema ---------------------------------------------------------------


def _field_of(error) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
    if error.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", error.message)
        name = missing.group(1) if missing else "?"
        return f"{path}.{name}" if path else name
    if error.validator == "additionalProperties":
        allowed = set((error.schema or {}).get("properties", {}))
        extra = sorted(set(error.instance) - allowed) if isinstance(error.instance, dict) else []
        return ", ".join(extra) or path or "(root)"
    return path or "(root)"


def metadata_validate(metadata: Any, *, schema: dict | None = None, version: str | None = None) -> None:
    """Raise CHUNK_METADATA_INVALID naming every bad field (first one in the message)."""
    if schema is None:
        version, schema = current_metadata_schema()
    if not isinstance(metadata, dict):
        raise ChunkMetadataInvalid("Chunk metadata must be a JSON object.", details={"schema_version": version})
    errors = sorted(
        Draft202012Validator(schema).iter_errors(metadata), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    if errors:
        items = [{"field": _field_of(e), "message": e.message} for e in errors]
        first = items[0]
        raise ChunkMetadataInvalid(
            f"Invalid chunk metadata field '{first['field']}': {first['message']}",
            details={"schema_version": version, "errors": items},
        )


# --- transitions -----------------------------------------------------------------


def _transition(chunk: Chunk, to_state: str, *, actor, note: str = "") -> bool:
    if chunk.state == to_state:
        return False
    if to_state not in ALLOWED_TRANSITIONS[chunk.state]:
        raise IllegalChunkTransition(
            f"Chunk '{chunk.chunk_id}' cannot go from {chunk.state} to {to_state}.",
            details={
                "chunk_id": chunk.chunk_id,
                "from": chunk.state,
                "to": to_state,
                "allowed": sorted(ALLOWED_TRANSITIONS[chunk.state]),
            },
        )
    ChunkEvent.objects.create(chunk=chunk, from_state=chunk.state, to_state=to_state, actor=actor, note=note[:300])
    chunk.state = to_state
    return True


def _can_validate_critical(user) -> bool:
    return bool(user is not None and user.is_active and user.has_perm(VALIDATE_CRITICAL_PERM))


def _apply_metadata(chunk: Chunk, metadata: dict) -> None:
    version, schema = current_metadata_schema()
    metadata = {**metadata}
    metadata.setdefault("versao_schema", version)
    metadata_validate(metadata, schema=schema, version=version)
    cls = OntologyClass.objects.filter(slug=metadata["classe_ontologica"]).first()
    if cls is None:
        raise ChunkMetadataInvalid(
            f"Invalid chunk metadata field 'classe_ontologica': unknown class {metadata['classe_ontologica']!r}",
            details={
                "schema_version": version,
                "errors": [{"field": "classe_ontologica", "message": "unknown ontology class"}],
            },
        )
    if cls.subclasses and metadata["subclasse"] not in cls.subclasses:
        raise ChunkMetadataInvalid(
            f"Invalid chunk metadata field 'subclasse': {metadata['subclasse']!r} is not a subclass of {cls.slug}",
            details={
                "schema_version": version,
                "errors": [{"field": "subclasse", "message": f"one of {', '.join(cls.subclasses)}"}],
            },
        )
    chunk.metadata = metadata
    chunk.ontology_class = cls
    chunk.subclass = metadata["subclasse"]
    chunk.schema_version = version
    chunk.needs_reindex = False
    chunk.last_error = ""


def _save(chunk: Chunk) -> None:
    chunk.full_clean()
    chunk.save()


# --- ingestion -------------------------------------------------------------------


@dataclass(frozen=True)
class IngestResult:
    chunk_id: str
    action: str  # created | updated | unchanged
    state: str
    awaiting_curator: bool


def _parse_record(record: Any) -> tuple[str, str, dict]:
    if not isinstance(record, dict):
        raise ChunkInvalid("A chunk record must be a JSON object.", details={"field": "(root)"})
    chunk_id, text = record.get("chunk_id"), record.get("texto")
    if not isinstance(chunk_id, str) or not CHUNK_ID_RE.match(chunk_id):
        raise ChunkInvalid("Field 'chunk_id' must be a lower-case slug (a-z, 0-9, _).", details={"field": "chunk_id"})
    if not isinstance(text, str) or not text.strip():
        raise ChunkInvalid("Field 'texto' must be a non-empty string.", details={"field": "texto"})
    if len(text) > MAX_TEXT_CHARS:
        raise ChunkInvalid(f"Field 'texto' is longer than {MAX_TEXT_CHARS} characters.", details={"field": "texto"})
    metadata = {k: v for k, v in record.items() if k not in RECORD_FIELDS}
    return chunk_id, text.strip(), metadata


# filled in by ingestion when a record leaves them out (the classifier's proposal, the schema version)
DERIVED_FIELDS = frozenset({"classe_ontologica", "subclasse", "versao_schema"})


def _same_metadata(stored: dict, incoming: dict) -> bool:
    """The record says what the stored chunk already holds: same values for every field it
    names, and no stored field it leaves out (a dropped optional field is a change)."""
    if any(stored.get(k) != v for k, v in incoming.items()):
        return False
    return not (set(stored) - set(incoming) - DERIVED_FIELDS)


def _ingest_unchanged(chunk: Chunk, *, acting_user, validator, index: bool) -> IngestResult:
    """Same content: nothing is rewritten, but a chunk waiting at `tagged` moves on when this
    run may index it (re-running with --validator indexes the critical chunks a first run
    without one left for curators; a run without --no-index indexes what one with it left)."""
    # a chunk marked for re-indexing (or that failed it) waits for reindex_chunks, not for us
    ready = not chunk.needs_reindex and not chunk.last_error
    if index and ready and chunk.state == S.TAGGED and chunk.ontology_class is not None:
        if not chunk.ontology_class.critical:
            _transition(chunk, S.VALIDATED, actor=acting_user, note="non-critical class: schema validation")
            chunk.validated_at = timezone.now()
        elif _can_validate_critical(validator):
            _transition(chunk, S.VALIDATED, actor=validator, note="critical class validated by curator")
            chunk.validated_by, chunk.validated_at = validator, timezone.now()
        if chunk.state == S.VALIDATED:
            _transition(chunk, S.INDEXED, actor=acting_user, note="indexed")
            chunk.indexed_at = timezone.now()
            _save(chunk)
    awaiting = index and chunk.state == S.TAGGED and chunk.is_critical
    return IngestResult(chunk.chunk_id, "unchanged", chunk.state, awaiting)


def _stored_content(chunk_id: str) -> tuple[str, dict] | None:
    """(text, metadata) of the stored chunk, read without a lock (it may change before the lock)."""
    return Chunk.objects.filter(chunk_id=chunk_id).values_list("text", "metadata").first()


class _ProposalNeeded(Exception):
    """The chunk changed between the unlocked look and the lock: its class must be proposed first."""


def chunk_ingest(*, acting_user, record: dict, validator=None, index: bool = True) -> IngestResult:
    """One record through the pipeline, atomically. Non-critical classes are validated by
    the schema check and indexed; critical ones wait at `tagged` for a curator unless a
    `validator` holding the validation permission is given.

    The class proposal embeds the text (the slow part, under the embedding engine's lock):
    it is computed before the transaction, never while the chunk's row is locked, and only
    when the record changes the chunk (a glance without a lock). Should another ingestion
    change the chunk between that glance and the lock, the transaction is abandoned before
    it writes anything, the proposal computed outside it, and the record ingested again."""
    chunk_id, text, metadata = _parse_record(record)
    stored = _stored_content(chunk_id)
    unchanged = stored is not None and stored[0] == text and _same_metadata(stored[1], metadata)
    proposal = None if unchanged else propose_class(text)
    for _ in range(3):  # a concurrent first insert of the same chunk_id loses the race, then updates
        try:
            return _chunk_ingest_locked(
                acting_user=acting_user,
                chunk_id=chunk_id,
                text=text,
                metadata=dict(metadata),
                proposal=proposal,
                validator=validator,
                index=index,
            )
        except _ProposalNeeded:
            proposal = propose_class(text)
        except IntegrityError:
            if not Chunk.objects.filter(chunk_id=chunk_id).exists():
                raise
            proposal = proposal or propose_class(text)
    raise ChunkInvalid(f"Chunk '{chunk_id}' is being ingested concurrently; try again.", details={"field": "chunk_id"})


@transaction.atomic
def _chunk_ingest_locked(
    *, acting_user, chunk_id: str, text: str, metadata: dict, proposal: ClassProposal | None, validator, index: bool
) -> IngestResult:
    chunk = Chunk.objects.select_for_update().filter(chunk_id=chunk_id).first()
    action = "created"
    if chunk is not None:
        if chunk.text == text and _same_metadata(chunk.metadata, metadata):
            return _ingest_unchanged(chunk, acting_user=acting_user, validator=validator, index=index)
        if proposal is None:
            raise _ProposalNeeded
        action = "updated"
        ChunkEvent.objects.create(
            chunk=chunk,
            from_state=chunk.state,
            to_state=S.CAPTURED,
            actor=acting_user,
            note="content replaced by ingestion",
        )
        chunk.state = S.CAPTURED
        chunk.validated_by, chunk.validated_at, chunk.indexed_at = None, None, None
        chunk.text, chunk.metadata = text, {}
    else:
        if proposal is None:
            raise _ProposalNeeded
        chunk = Chunk(chunk_id=chunk_id, text=text, state=S.CAPTURED)
        chunk.save()
        ChunkEvent.objects.create(chunk=chunk, from_state="", to_state=S.CAPTURED, actor=acting_user, note="ingested")

    chunk.proposed_class, chunk.proposed_subclass = proposal.class_id, proposal.subclass
    chunk.proposal_confidence = proposal.confidence
    metadata.setdefault("classe_ontologica", proposal.class_id)
    metadata.setdefault("subclasse", proposal.subclass)
    _transition(
        chunk,
        S.CLASSIFIED,
        actor=acting_user,
        note=f"proposed {proposal.class_id}/{proposal.subclass} ({proposal.confidence})",
    )
    _apply_metadata(chunk, metadata)
    _transition(chunk, S.TAGGED, actor=acting_user, note="metadata valid")
    awaiting = False
    if index:
        if not chunk.ontology_class.critical:
            _transition(chunk, S.VALIDATED, actor=acting_user, note="non-critical class: schema validation")
            chunk.validated_at = timezone.now()
        elif _can_validate_critical(validator):
            _transition(chunk, S.VALIDATED, actor=validator, note="critical class validated by curator")
            chunk.validated_by, chunk.validated_at = validator, timezone.now()
        else:
            awaiting = True
        if chunk.state == S.VALIDATED:
            _transition(chunk, S.INDEXED, actor=acting_user, note="indexed")
            chunk.indexed_at = timezone.now()
    _save(chunk)
    return IngestResult(chunk_id, action, chunk.state, awaiting)


# --- curation --------------------------------------------------------------------


@transaction.atomic
def chunk_accept_proposal(*, acting_user, chunk: Chunk) -> Chunk:
    """classified → tagged with the classifier's proposed class and subclass."""
    chunk = Chunk.objects.select_for_update().get(pk=chunk.pk)
    if chunk.state != S.CLASSIFIED:
        raise IllegalChunkTransition(
            f"Chunk '{chunk.chunk_id}' is {chunk.state}, not classified.",
            details={"chunk_id": chunk.chunk_id, "from": chunk.state, "to": S.TAGGED},
        )
    _apply_metadata(
        chunk, {**chunk.metadata, "classe_ontologica": chunk.proposed_class, "subclasse": chunk.proposed_subclass}
    )
    _transition(chunk, S.TAGGED, actor=acting_user, note="proposal accepted")
    _save(chunk)
    return chunk


@transaction.atomic
def chunk_metadata_update(*, acting_user, chunk: Chunk, metadata: dict, text: str | None = None) -> Chunk:
    """Curator edit. A validated/indexed chunk of a critical class goes back to `tagged`
    (it must be validated again); others keep their state."""
    chunk = Chunk.objects.select_for_update(of=("self",)).select_related("ontology_class").get(pk=chunk.pk)
    changed = metadata != chunk.metadata or (text is not None and text != chunk.text)
    if text is not None:
        if not text.strip():
            raise ChunkInvalid("Field 'texto' must be a non-empty string.", details={"field": "texto"})
        chunk.text = text.strip()
    _apply_metadata(chunk, metadata)
    if changed and chunk.state in (S.VALIDATED, S.INDEXED) and chunk.ontology_class.critical:
        _transition(chunk, S.TAGGED, actor=acting_user, note="edited: critical class needs validation again")
        chunk.validated_by, chunk.validated_at, chunk.indexed_at = None, None, None
    elif chunk.state in (S.CAPTURED, S.CLASSIFIED):
        if chunk.state == S.CAPTURED:
            _transition(chunk, S.CLASSIFIED, actor=acting_user, note="classified by curator")
        _transition(chunk, S.TAGGED, actor=acting_user, note="tagged by curator")
    _save(chunk)
    return chunk


@transaction.atomic
def chunk_validate(*, acting_user, chunk: Chunk) -> Chunk:
    chunk = Chunk.objects.select_for_update(of=("self",)).select_related("ontology_class").get(pk=chunk.pk)
    if chunk.state == S.VALIDATED:
        return chunk
    if chunk.ontology_class is not None and chunk.ontology_class.critical and not _can_validate_critical(acting_user):
        raise CriticalValidationForbidden(
            f"Chunk '{chunk.chunk_id}' is of the high-criticality class {chunk.ontology_class.slug}; "
            "validating it needs the validate_critical_chunk permission.",
            details={"chunk_id": chunk.chunk_id, "class": chunk.ontology_class.slug},
        )
    _apply_metadata(chunk, chunk.metadata)
    _transition(chunk, S.VALIDATED, actor=acting_user, note="validated")
    chunk.validated_by, chunk.validated_at = acting_user, timezone.now()
    _save(chunk)
    return chunk


@transaction.atomic
def chunk_index(*, acting_user, chunk: Chunk) -> Chunk:
    chunk = (
        Chunk.objects.select_for_update(of=("self",)).select_related("ontology_class", "validated_by").get(pk=chunk.pk)
    )
    if chunk.state == S.INDEXED:
        return chunk
    if (
        chunk.ontology_class is not None
        and chunk.ontology_class.critical
        and not _can_validate_critical(chunk.validated_by)
    ):
        raise CriticalValidationForbidden(
            f"Chunk '{chunk.chunk_id}' was not validated by a curator with validate_critical_chunk.",
            details={"chunk_id": chunk.chunk_id, "class": chunk.ontology_class.slug},
        )
    _transition(chunk, S.INDEXED, actor=acting_user, note="indexed")
    chunk.indexed_at = timezone.now()
    _save(chunk)
    return chunk


@transaction.atomic
def chunk_send_back(*, acting_user, chunk: Chunk, note: str = "sent back to tagging") -> Chunk:
    chunk = Chunk.objects.select_for_update().get(pk=chunk.pk)
    _transition(chunk, S.TAGGED, actor=acting_user, note=note)
    chunk.validated_by, chunk.validated_at, chunk.indexed_at = None, None, None
    _save(chunk)
    return chunk


# --- schema versions and re-indexing ------------------------------------------------


@transaction.atomic
def metadata_schema_activate(*, acting_user, version: str) -> int:
    """Make `version` current; every chunk of another schema version is marked for
    re-indexing. Returns how many were marked."""
    schema = MetadataSchema.objects.select_for_update().filter(version=version).first()
    if schema is None:
        raise SchemaVersionNotFound(details={"version": version})
    MetadataSchema.objects.exclude(pk=schema.pk).filter(is_current=True).update(is_current=False)
    if not schema.is_current:
        schema.is_current = True
        schema.save(update_fields=["is_current"])
    marked = Chunk.objects.exclude(schema_version=version).update(needs_reindex=True, updated_at=timezone.now())
    logger.info("ontology.schema_activated version=%s marked=%d", version, marked)
    return marked


def chunks_reindex(*, acting_user, everything: bool = False) -> dict[str, int]:
    """Re-validate marked chunks against the current schema (one transaction per chunk).
    Valid → schema version bumped, back in the index if it was; invalid → `tagged`
    with the error, out of the index until a curator fixes it."""
    version, schema = current_metadata_schema()
    qs = Chunk.objects.all() if everything else Chunk.objects.filter(needs_reindex=True)
    counts = {"reindexed": 0, "failed": 0}
    for pk in qs.order_by("pk").values_list("pk", flat=True):
        with transaction.atomic():
            chunk = Chunk.objects.select_for_update().get(pk=pk)
            metadata = {**chunk.metadata, "versao_schema": version}
            try:
                metadata_validate(metadata, schema=schema, version=version)
            except ChunkMetadataInvalid as exc:
                chunk.last_error = exc.message[:1000]
                if chunk.state in (S.VALIDATED, S.INDEXED):
                    _transition(chunk, S.TAGGED, actor=acting_user, note=f"re-index failed on schema {version}")
                chunk.save()
                counts["failed"] += 1
                continue
            chunk.metadata, chunk.schema_version = metadata, version
            chunk.needs_reindex, chunk.last_error = False, ""
            if chunk.state == S.INDEXED:
                chunk.indexed_at = timezone.now()
            chunk.save()
            counts["reindexed"] += 1
    logger.info("ontology.reindex version=%s reindexed=%d failed=%d", version, counts["reindexed"], counts["failed"])
    return counts
