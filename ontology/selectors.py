"""Reads: skills, profiles, the current metadata schema and the in-memory corpus of
indexed chunks (rebuilt when the set of indexed chunks changes)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from django.db.models import Count, Max, QuerySet

from ontology.exceptions import UnknownSkillError
from ontology.models import (
    Chunk,
    ChunkState,
    MetadataSchema,
    Profile,
    ProfileSkill,
    Skill,
    SummaryNode,
    SummaryTree,
)
from ontology.routing.corpus import ChunkRecord, Corpus
from ontology.routing.summary_tree import SummaryTreeIndex, TreeNode
from ontology.routing.data import CURRENT_SCHEMA_VERSION, metadata_schema

VALIDATE_CRITICAL_PERM = "ontology.validate_critical_chunk"


def skill_list() -> QuerySet[Skill]:
    return Skill.objects.filter(is_active=True).select_related("ontology_class").order_by("slug")


def skills_by_slug(slugs: Sequence[str]) -> list[Skill]:
    """Active skills in the requested order; any unknown or inactive slug is an error."""
    wanted = list(dict.fromkeys(slugs))
    found = {s.slug: s for s in skill_list().filter(slug__in=wanted)}
    unknown = [s for s in wanted if s not in found]
    if unknown:
        raise UnknownSkillError(f"Unknown or inactive skill: {', '.join(unknown)}.", details={"unknown": unknown})
    return [found[s] for s in wanted]


def skill_catalog() -> dict[str, Skill]:
    return {s.slug: s for s in skill_list()}


def profile_get(*, tenant, user=None, external_user_id: str = "") -> Profile | None:
    qs = Profile.objects.filter(tenant=tenant)
    if external_user_id:
        return qs.filter(external_user_id=external_user_id).first()
    if user is None:
        return None
    return qs.filter(external_user_id="", user=user).first()


def profile_skill_rows(profile: Profile) -> list[ProfileSkill]:
    rows = ProfileSkill.objects.filter(profile=profile, skill__is_active=True).select_related("skill")
    return list(rows.order_by("skill__slug"))


def profile_skills(profile: Profile) -> list[Skill]:
    """The profile's active skills, read fresh (not from a prefetch cache)."""
    rows = ProfileSkill.objects.filter(profile=profile, skill__is_active=True).select_related("skill")
    return [ps.skill for ps in rows.order_by("skill__slug")]


def current_metadata_schema() -> tuple[str, dict]:
    row = MetadataSchema.objects.filter(is_current=True).only("version", "schema").first()
    if row is None:
        return CURRENT_SCHEMA_VERSION, metadata_schema(CURRENT_SCHEMA_VERSION)
    return row.version, row.schema


def chunk_is_retrievable(chunk: Chunk, _perm_cache: dict | None = None) -> bool:
    """Indexed, and — for a high-criticality class — validated by a curator who holds the
    validation permission. Checked again here so that no other path can leak one."""
    if chunk.state != ChunkState.INDEXED:
        return False
    if chunk.ontology_class is None or not chunk.ontology_class.critical:
        return True
    user = chunk.validated_by
    if user is None or not user.is_active:
        return False
    cache = _perm_cache if _perm_cache is not None else {}
    if user.pk not in cache:
        cache[user.pk] = user.has_perm(VALIDATE_CRITICAL_PERM)
    return cache[user.pk]


_corpus_lock = threading.Lock()
_corpus_cache: dict[str, object] = {"key": None, "corpus": None}


def clear_corpus_cache() -> None:
    with _corpus_lock:
        _corpus_cache.update(key=None, corpus=None)


def corpus_key_text(key: tuple) -> str:
    n, last, classes = key
    return f"{n}|{last.isoformat() if last else ''}|{classes.isoformat() if classes else ''}"


def indexed_corpus_key() -> str:
    agg = Chunk.objects.filter(state=ChunkState.INDEXED).aggregate(
        n=Count("id"), last=Max("updated_at"), classes=Max("ontology_class__updated_at")
    )
    return corpus_key_text((agg["n"], agg["last"], agg["classes"]))


def indexed_corpus() -> Corpus:
    """The retrievable chunks as an in-memory BM25 corpus, cached per process.

    One cheap aggregate query per call; the corpus is rebuilt when the number of indexed
    chunks, their latest change or the latest change to their classes moves (a class made
    critical in the admin must drop its unvalidated chunks at once, not at the next chunk
    edit)."""
    agg = Chunk.objects.filter(state=ChunkState.INDEXED).aggregate(
        n=Count("id"), last=Max("updated_at"), classes=Max("ontology_class__updated_at")
    )
    tree = SummaryTree.objects.order_by("-version").values_list("pk", "version", "corpus_key").first()
    chunks_key = corpus_key_text((agg["n"], agg["last"], agg["classes"]))
    # the tree counts only when it was built from these very chunks
    tree = tree if tree is not None and tree[2] == chunks_key else None
    key = (chunks_key, tree[0] if tree else None)
    with _corpus_lock:
        if _corpus_cache["key"] == key and _corpus_cache["corpus"] is not None:
            return _corpus_cache["corpus"]  # type: ignore[return-value]
    rows = (
        Chunk.objects.filter(state=ChunkState.INDEXED)
        .select_related("ontology_class", "validated_by")
        .order_by("chunk_id")
    )
    perm_cache: dict = {}
    records = [
        ChunkRecord(chunk_id=c.chunk_id, text=c.text, meta=c.metadata)
        for c in rows
        if chunk_is_retrievable(c, perm_cache)
    ]
    corpus = Corpus(records, version=key)
    if tree is not None:
        nodes = SummaryNode.objects.filter(tree_id=tree[0]).order_by("level", "path")
        corpus.tree = SummaryTreeIndex(
            version=tree[1],
            nodes=[TreeNode(n.path, n.level, n.text, tuple(n.chunk_ids), n.parent) for n in nodes],
        )
    with _corpus_lock:
        _corpus_cache.update(key=key, corpus=corpus)
    return corpus
