"""Load the bundled ontology files into the database (used by the data migration and
by ``load_ontology``). Functions take the model classes so migrations can pass the
historical models. Idempotent: existing rows are updated in place."""

from __future__ import annotations

from ontology.routing.data import CURRENT_SCHEMA_VERSION, classes_file, metadata_schema, skills_file
from ontology.routing.text import normalize


def load_classes(OntologyClass) -> int:
    for position, row in enumerate(classes_file()["classes"]):
        OntologyClass.objects.update_or_create(
            slug=row["id"],
            defaults={
                "group": row["group"],
                "label": row["label"],
                "description": row.get("description", ""),
                "subclasses": list(row.get("subclasses") or []),
                "critical": bool(row.get("critical", False)),
                "position": position,
            },
        )
    return len(classes_file()["classes"])


def _class_for(OntologyClass, ref: str):
    key = normalize(ref).replace(" ", "_")
    for cls in OntologyClass.objects.all():
        if key in (cls.slug, normalize(cls.label).replace(" ", "_")):
            return cls
    raise LookupError(f"Skill references unknown ontology class {ref!r}")


def load_skills(Skill, OntologyClass) -> int:
    rows = skills_file()["skills"]
    for row in rows:
        situational = row.get("situacional") or {}
        Skill.objects.update_or_create(
            slug=row["id"],
            defaults={
                "category": row["categoria"],
                "ontology_class": _class_for(OntologyClass, row["classe_ontologica"]),
                "rag_bias": dict(row.get("rag_bias") or {}),
                "index_filters": dict(row.get("filtros_indexacao") or {}),
                "min_tier": row.get("tier_minimo", "semente"),
                "inference_agent": row.get("agente_inferencia", ""),
                "version": str(row.get("versao", "")),
                "critical": bool(row.get("critica", False)),
                "situational": bool(situational),
                "activation": dict(situational.get("ativacao") or {}),
                "deactivation": dict(situational.get("desativacao") or {}),
            },
        )
    return len(rows)


def load_schema(MetadataSchema) -> str:
    schema, _ = MetadataSchema.objects.get_or_create(
        version=CURRENT_SCHEMA_VERSION, defaults={"schema": metadata_schema(CURRENT_SCHEMA_VERSION)}
    )
    if not MetadataSchema.objects.filter(is_current=True).exists():
        MetadataSchema.objects.filter(pk=schema.pk).update(is_current=True)
    return schema.version
