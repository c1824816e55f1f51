from common.exceptions import ApplicationError, ConflictError, NotFoundError


class UnknownSkillError(ApplicationError):
    code = "UNKNOWN_SKILL"
    status_code = 400
    message = "Unknown or inactive skill."


class SkillTierError(ApplicationError):
    code = "SKILL_TIER_NOT_ALLOWED"
    status_code = 400
    message = "The profile's tier is below the skill's minimum tier."


class ChunkMetadataInvalid(ApplicationError):
    code = "CHUNK_METADATA_INVALID"
    status_code = 400
    message = "Chunk metadata does not match the schema."


class ChunkInvalid(ApplicationError):
    code = "CHUNK_INVALID"
    status_code = 400
    message = "Invalid chunk."


class IllegalChunkTransition(ConflictError):
    code = "ILLEGAL_CHUNK_TRANSITION"
    message = "This chunk cannot move to that state."


class CriticalValidationForbidden(ApplicationError):
    code = "CRITICAL_VALIDATION_FORBIDDEN"
    status_code = 403
    message = "High-criticality chunks need a curator with the validate_critical_chunk permission."


class ChunkNotFound(NotFoundError):
    code = "CHUNK_NOT_FOUND"
    message = "Chunk not found."


class SchemaVersionNotFound(NotFoundError):
    code = "SCHEMA_VERSION_NOT_FOUND"
    message = "Unknown metadata schema version."


class ProfileNotFound(NotFoundError):
    code = "PROFILE_NOT_FOUND"
    message = "Profile not found."
