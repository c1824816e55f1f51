"""Writes of the ontology app: chunk ingestion and curation, schema versions, profiles,
and ontology_route (which records every routing decision)."""

from ontology.services.chunks import (  # noqa: F401
    ALLOWED_TRANSITIONS,
    IngestResult,
    chunk_accept_proposal,
    chunk_index,
    chunk_ingest,
    chunk_metadata_update,
    chunk_send_back,
    chunk_validate,
    chunks_reindex,
    metadata_schema_activate,
    metadata_validate,
)
from ontology.services.profiles import profile_apply_situational, profile_set_skills  # noqa: F401
from ontology.services.routing import OntologyRouteResult, ontology_for_caller, ontology_route  # noqa: F401
