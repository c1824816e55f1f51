"""What each admin group may do with the ontology (see accounts/roles.py).

Curators edit everything but may not validate high-criticality chunks: only the
validators (the seed's curation committee) hold ``validate_critical_chunk``.
Auditors read the routing records.
"""

from accounts.roles import AUDITORS, CURATORS, VALIDATORS, AllExcept

CRITICAL_PERMISSION = "validate_critical_chunk"

ROLES = {
    CURATORS: {"ontology": AllExcept({CRITICAL_PERMISSION})},
    VALIDATORS: {
        "ontology": (
            CRITICAL_PERMISSION,
            "view_chunk",
            "change_chunk",
            "view_chunkevent",
            "view_ontologyclass",
            "view_metadataschema",
        )
    },
    AUDITORS: {"ontology": ("view_ontologyroute",)},
}
