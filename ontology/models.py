"""Ontology: classes, skills (profile priors), profiles, curated chunks, routing records."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from ontology.routing.data import CURRENT_SCHEMA_VERSION, strategies
from ontology.routing.distribution import SkillSpec

SLUG_VALIDATOR = RegexValidator(r"^[a-z0-9][a-z0-9_]*$", "Use lower case letters, digits and underscores.")


class OntologyClass(models.Model):
    """One of the 16 classes of the RegenerAI ontology (bundled in ontology/data/classes.yaml)."""

    class Group(models.TextChoices):
        CONTEXT_PROFILE = "contexto_perfil", "Contexto e perfil → Skills"
        PROCESS_STRUCTURE = "processo_estrutura", "Processo e estrutura → Skills situacionais"
        REASONING = "raciocinio_diagnostico", "Raciocínio diagnóstico e operacional → padrões de consulta"
        KNOWLEDGE_EVIDENCE = "conhecimento_evidencia", "Conhecimento e evidência → metadados de chunk"

    slug = models.CharField(max_length=64, unique=True, validators=[SLUG_VALIDATOR])
    group = models.CharField(max_length=32, choices=Group.choices)
    label = models.CharField(max_length=120)
    description = models.TextField(blank=True)
    subclasses = models.JSONField(default=list, blank=True)
    critical = models.BooleanField(
        default=False, help_text="High criticality: chunks need a curator with validate_critical_chunk before indexing."
    )
    position = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "slug"]
        verbose_name_plural = "ontology classes"

    def __str__(self) -> str:
        return self.slug

    def clean(self):
        if not isinstance(self.subclasses, list) or not all(
            isinstance(s, str) and SLUG_VALIDATOR.regex.match(s) for s in self.subclasses
        ):
            raise ValidationError({"subclasses": "A list of lower-case slugs."})


class Tier(models.TextChoices):
    SEMENTE = "semente", "Semente"
    MUDA = "muda", "Muda"
    ARVORE = "arvore", "Árvore"
    FLORESTA = "floresta", "Floresta"


TIER_ORDER = [t.value for t in Tier]


class Skill(models.Model):
    """A profile Skill (seed 002): a prior over RAG strategies plus indexing filters."""

    slug = models.CharField(max_length=64, unique=True, validators=[SLUG_VALIDATOR])
    category = models.CharField(max_length=64)
    ontology_class = models.ForeignKey(OntologyClass, on_delete=models.PROTECT, related_name="skills")
    rag_bias = models.JSONField(default=dict, blank=True, help_text="strategy → weight in [0, 1]")
    index_filters = models.JSONField(default=dict, blank=True, help_text='metadata key → value or list; "*" = any')
    min_tier = models.CharField(max_length=16, choices=Tier.choices, default=Tier.SEMENTE)
    inference_agent = models.CharField(max_length=64, blank=True)
    version = models.CharField(max_length=32)
    critical = models.BooleanField(default=False, help_text="When active, the guardian agent takes over.")
    situational = models.BooleanField(default=False)
    activation = models.JSONField(default=dict, blank=True, help_text='e.g. {"sintomas": ["compactacao"]}')
    deactivation = models.JSONField(default=dict, blank=True, help_text='e.g. {"termos": ["erosao controlada"]}')
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self):
        errors = {}
        known = set(strategies())
        if not isinstance(self.rag_bias, dict):
            errors["rag_bias"] = "An object strategy → weight."
        else:
            unknown = sorted(set(self.rag_bias) - known)
            if unknown:
                errors["rag_bias"] = f"Unknown strategies: {', '.join(unknown)} (known: {', '.join(sorted(known))})."
            elif any(
                not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 <= v <= 1
                for v in self.rag_bias.values()
            ):
                errors["rag_bias"] = "Weights must be numbers between 0 and 1."
        if not isinstance(self.index_filters, dict) or not all(
            isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
            for v in self.index_filters.values()
        ):
            errors["index_filters"] = "An object key → string or list of strings."
        else:
            # a real filter on a field chunks don't carry would silently retrieve nothing
            from ontology.selectors import current_metadata_schema

            fields = set(current_metadata_schema()[1].get("properties", {}))
            unknown = sorted(
                k
                for k, v in self.index_filters.items()
                if k not in fields and any(x != "*" for x in ([v] if isinstance(v, str) else v))
            )
            if unknown:
                errors["index_filters"] = (
                    f'Unknown chunk metadata field(s): {", ".join(unknown)} (only "*" may name another field).'
                )
        for name in ("activation", "deactivation"):
            if not isinstance(getattr(self, name), dict):
                errors[name] = "An object."
        if self.situational and not (self.activation or {}).get("sintomas"):
            errors["activation"] = 'A situational skill needs {"sintomas": [...]} to activate.'
        if errors:
            raise ValidationError(errors)

    def to_spec(self):
        return SkillSpec(
            id=self.slug,
            category=self.category,
            rag_bias=dict(self.rag_bias or {}),
            index_filters=dict(self.index_filters or {}),
            critical=self.critical,
            inference_agent=self.inference_agent,
            situational={"ativacao": self.activation, "desativacao": self.deactivation} if self.situational else None,
        )


class Profile(models.Model):
    """Per tenant and end user (external id from the front end) or the API user itself."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="ontology_profiles")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="ontology_profiles"
    )
    external_user_id = models.CharField(max_length=128, blank=True, default="")
    tier = models.CharField(max_length=16, choices=Tier.choices, default=Tier.SEMENTE)
    skills = models.ManyToManyField(Skill, through="ProfileSkill", related_name="profiles", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tenant__slug", "external_user_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "external_user_id"],
                condition=~models.Q(external_user_id=""),
                name="ontology_profile_unique_external_user",
            ),
            models.UniqueConstraint(
                fields=["tenant", "user"],
                condition=models.Q(external_user_id="") & models.Q(user__isnull=False),
                name="ontology_profile_unique_api_user",
            ),
            models.CheckConstraint(
                condition=~models.Q(external_user_id="") | models.Q(user__isnull=False),
                name="ontology_profile_has_owner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant}:{self.external_user_id or self.user}"


class ProfileSkill(models.Model):
    class Source(models.TextChoices):
        MANUAL = "manual", "Set by the user or an admin"
        SITUATIONAL = "situational", "Activated by a detected symptom"

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="profile_skills")
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="profile_skills")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.MANUAL)
    activated_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["profile_id", "skill__slug"]
        constraints = [models.UniqueConstraint(fields=["profile", "skill"], name="ontology_profile_skill_unique")]

    def __str__(self) -> str:
        return f"{self.profile} → {self.skill}"


class MetadataSchema(models.Model):
    """A versioned JSON Schema for chunk metadata. Activating another version marks
    chunks of other versions for re-indexing (``reindex_chunks``)."""

    version = models.CharField(max_length=64, unique=True)
    schema = models.JSONField()
    is_current = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_current"], condition=models.Q(is_current=True), name="ontology_single_current_schema"
            )
        ]

    def __str__(self) -> str:
        return self.version


class ChunkState(models.TextChoices):
    CAPTURED = "captured", "Captured"
    CLASSIFIED = "classified", "Classified"
    TAGGED = "tagged", "Tagged"
    VALIDATED = "validated", "Validated"
    INDEXED = "indexed", "Indexed"


class Chunk(models.Model):
    """A knowledge nugget with the seed's ontology metadata, moved through the ingestion
    states captured → classified → tagged → validated → indexed. Only indexed chunks are
    retrieved. Chunks are a shared, curated knowledge base (not tenant-owned)."""

    chunk_id = models.CharField(max_length=120, unique=True, validators=[SLUG_VALIDATOR])
    text = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    ontology_class = models.ForeignKey(
        OntologyClass, null=True, blank=True, on_delete=models.PROTECT, related_name="chunks"
    )
    subclass = models.CharField(max_length=80, blank=True)
    state = models.CharField(max_length=16, choices=ChunkState.choices, default=ChunkState.CAPTURED)
    schema_version = models.CharField(max_length=64, default=CURRENT_SCHEMA_VERSION)
    needs_reindex = models.BooleanField(default=False)
    proposed_class = models.CharField(max_length=64, blank=True)
    proposed_subclass = models.CharField(max_length=80, blank=True)
    proposal_confidence = models.FloatField(null=True, blank=True)
    validated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="validated_chunks"
    )
    validated_at = models.DateTimeField(null=True, blank=True)
    indexed_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["chunk_id"]
        indexes = [models.Index(fields=["state", "updated_at"])]
        permissions = [
            (
                "validate_critical_chunk",
                "Can validate high-criticality chunks (interventions, dosages, contraindications)",
            ),
        ]

    def __str__(self) -> str:
        return self.chunk_id

    @property
    def is_critical(self) -> bool:
        return bool(self.ontology_class and self.ontology_class.critical)


class ChunkEvent(models.Model):
    """Audit trail of a chunk's ingestion and curation."""

    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="events")
    from_state = models.CharField(max_length=16, blank=True)
    to_state = models.CharField(max_length=16)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chunk_id", "id"]

    def __str__(self) -> str:
        return f"{self.chunk_id}: {self.from_state or '-'} → {self.to_state}"


class OntologyRoute(models.Model):
    """The record of one routing decision: pattern, distribution, chosen strategy, filters.
    No message text is stored."""

    tenant = models.ForeignKey("accounts.Tenant", on_delete=models.CASCADE, related_name="ontology_routes")
    profile = models.ForeignKey(Profile, null=True, blank=True, on_delete=models.SET_NULL, related_name="routes")
    origin = models.CharField(max_length=32, default="api", help_text="api, context or turn")
    pattern = models.CharField(max_length=32)
    confidence = models.FloatField()
    fallback = models.BooleanField(default=False)
    distribution = models.JSONField()
    strategy = models.CharField(max_length=32)
    filters = models.JSONField()
    skills = models.JSONField(default=list)
    interruptions = models.JSONField(default=list, help_text="interruption types")
    chunk_ids = models.JSONField(default=list)
    runner_up = models.CharField(max_length=32, blank=True, default="")
    evidence_shares = models.JSONField(
        default=dict, blank=True, help_text="share of the delivered chunks each strategy brought (credits feedback)"
    )
    policy_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="strategy policy version that weighed this route (None: deterministic)"
    )
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["tenant", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.pattern} → {self.strategy}"


class StrategyPolicy(models.Model):
    """A tenant's learned strategy policy (seed roadmap: a bandit whose initial state is the
    deterministic matrix). ``state`` holds the feedback credited per pattern and strategy,
    ``{pattern: {strategy: [successes, failures]}}``; the priors are not stored, they are the
    deterministic distribution of each route (matrix shifted by the active skills' biases).
    Every change writes a ``StrategyPolicyRevision`` and bumps ``version``."""

    tenant = models.OneToOneField("accounts.Tenant", on_delete=models.CASCADE, related_name="strategy_policy")
    version = models.PositiveIntegerField(default=1)
    state = models.JSONField(default=dict, blank=True)
    frozen = models.BooleanField(default=False, help_text="feedback is still recorded but no longer moves the policy")
    max_shift = models.FloatField(
        default=0.15, help_text="curator bound: a strategy's weight stays within ± this of its deterministic weight"
    )
    prior_strength = models.FloatField(
        default=20.0, help_text="pseudo-ratings the deterministic weights count for (higher: slower learning)"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "strategy policies"

    def __str__(self) -> str:
        return f"policy v{self.version} ({self.tenant_id})"

    def clean(self) -> None:
        if not 0.0 <= self.max_shift <= 1.0:
            raise ValidationError({"max_shift": "Between 0 and 1."})
        if self.prior_strength <= 0:
            raise ValidationError({"prior_strength": "Must be positive."})


class StrategyPolicyRevision(models.Model):
    """Immutable snapshot of a policy version (what a rollback restores)."""

    policy = models.ForeignKey(StrategyPolicy, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    state = models.JSONField(default=dict)
    frozen = models.BooleanField(default=False)
    max_shift = models.FloatField()
    prior_strength = models.FloatField()
    note = models.CharField(max_length=200, blank=True, default="")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]
        constraints = [models.UniqueConstraint(fields=["policy", "version"], name="uniq_policy_revision_version")]

    def __str__(self) -> str:
        return f"v{self.version} {self.note}"


class SummaryTree(models.Model):
    """One version of RAPTOR's summary tree over the indexed chunks (built at ingest by a
    Celery task). ``corpus_key`` names the indexed chunks it was built from; routes use the
    latest tree whose key matches their corpus."""

    version = models.PositiveIntegerField(unique=True)
    corpus_key = models.CharField(max_length=200)
    provider = models.CharField(max_length=32, help_text="who wrote the summaries (offline = extractive)")
    nodes_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-version"]

    def __str__(self) -> str:
        return f"summary tree v{self.version}"


class SummaryNode(models.Model):
    tree = models.ForeignKey(SummaryTree, on_delete=models.CASCADE, related_name="nodes")
    path = models.CharField(max_length=200)
    level = models.PositiveSmallIntegerField()
    parent = models.CharField(max_length=200, blank=True, default="")
    text = models.TextField()
    chunk_ids = models.JSONField(default=list)

    class Meta:
        ordering = ["level", "path"]
        constraints = [models.UniqueConstraint(fields=["tree", "path"], name="uniq_summary_node_path")]

    def __str__(self) -> str:
        return self.path
