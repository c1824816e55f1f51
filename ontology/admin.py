from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.forms.models import BaseInlineFormSet
from django.utils import timezone

from common.exceptions import ApplicationError
from ontology.models import (
    TIER_ORDER,
    Chunk,
    ChunkEvent,
    MetadataSchema,
    OntologyClass,
    OntologyRoute,
    Profile,
    ProfileSkill,
    Skill,
    StrategyPolicy,
)
from ontology.services import (
    chunk_accept_proposal,
    chunk_index,
    chunk_ingest,
    chunk_metadata_update,
    chunk_send_back,
    chunk_validate,
    metadata_schema_activate,
    metadata_validate,
)
from ontology.services.policy import policy_freeze, policy_reset, policy_rollback, policy_set_bounds


@admin.register(OntologyClass)
class OntologyClassAdmin(admin.ModelAdmin):
    list_display = ["slug", "label", "group", "critical", "position"]
    list_filter = ["group", "critical"]
    search_fields = ["slug", "label", "description"]
    readonly_fields = ["updated_at"]


@admin.register(Skill)
class SkillAdmin(admin.ModelAdmin):
    list_display = ["slug", "category", "ontology_class", "min_tier", "critical", "situational", "version", "is_active"]
    list_filter = ["category", "critical", "situational", "min_tier", "is_active"]
    search_fields = ["slug", "category", "inference_agent"]
    list_select_related = ["ontology_class"]
    readonly_fields = ["updated_at"]


class ProfileSkillFormSet(BaseInlineFormSet):
    """The tier rule of PUT /profile (profile_set_skills) holds in the admin too."""

    def clean(self):
        super().clean()
        tier = self.instance.tier
        too_high = sorted(
            form.cleaned_data["skill"].slug
            for form in self.forms
            if form.cleaned_data
            and not form.cleaned_data.get("DELETE")
            and form.cleaned_data.get("skill") is not None
            and TIER_ORDER.index(form.cleaned_data["skill"].min_tier) > TIER_ORDER.index(tier)
        )
        if too_high:
            raise forms.ValidationError(f"Skill(s) {', '.join(too_high)} need a higher tier than '{tier}'.")


class ProfileSkillInline(admin.TabularInline):
    model = ProfileSkill
    formset = ProfileSkillFormSet
    extra = 0
    fields = ["skill", "source", "activated_at"]
    readonly_fields = ["activated_at"]


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["id", "tenant", "external_user_id", "user", "tier", "updated_at"]
    list_filter = ["tier", "tenant"]
    search_fields = ["external_user_id", "user__username", "tenant__slug"]
    list_select_related = ["tenant", "user"]
    inlines = [ProfileSkillInline]


class ChunkEventInline(admin.TabularInline):
    model = ChunkEvent
    extra = 0
    can_delete = False
    fields = ["created_at", "from_state", "to_state", "actor", "note"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


class ChunkForm(forms.ModelForm):
    class Meta:
        model = Chunk
        fields = ["chunk_id", "text", "metadata"]

    def clean_metadata(self):
        metadata = self.cleaned_data.get("metadata")
        try:
            metadata_validate(metadata)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
        cls = OntologyClass.objects.filter(slug=metadata["classe_ontologica"]).first()
        if cls is None:
            raise forms.ValidationError(f"Unknown ontology class {metadata['classe_ontologica']!r}.")
        if cls.subclasses and metadata["subclasse"] not in cls.subclasses:
            raise forms.ValidationError(f"subclasse must be one of: {', '.join(cls.subclasses)}.")
        return metadata


def _run(modeladmin, request, queryset, service, verb):
    done, failed = 0, []
    for chunk in queryset.order_by("pk"):
        try:
            service(acting_user=request.user, chunk=chunk)
            done += 1
        except ApplicationError as exc:
            failed.append(f"{chunk.chunk_id}: {exc.message}")
    if done:
        modeladmin.message_user(request, f"{verb} {done} chunk(s).", messages.SUCCESS)
    for line in failed[:20]:
        modeladmin.message_user(request, line, messages.ERROR)


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    form = ChunkForm
    list_display = [
        "chunk_id",
        "ontology_class",
        "subclass",
        "state",
        "proposed_class",
        "needs_reindex",
        "validated_by",
        "updated_at",
    ]
    list_filter = ["state", "ontology_class", "needs_reindex", "schema_version"]
    search_fields = ["chunk_id", "text"]
    list_select_related = ["ontology_class", "validated_by"]
    readonly_fields = [
        "state",
        "ontology_class",
        "subclass",
        "proposed_class",
        "proposed_subclass",
        "proposal_confidence",
        "schema_version",
        "needs_reindex",
        "validated_by",
        "validated_at",
        "indexed_at",
        "last_error",
        "created_at",
        "updated_at",
    ]
    inlines = [ChunkEventInline]
    actions = ["accept_proposal", "validate", "index", "validate_and_index", "send_back", "mark_for_reindex"]

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "chunk_id"] if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        # Writes go through the services, so the admin, the API and the commands agree.
        if change:
            chunk_metadata_update(
                acting_user=request.user,
                chunk=obj,
                metadata=form.cleaned_data["metadata"],
                text=form.cleaned_data["text"],
            )
        else:
            record = {**form.cleaned_data["metadata"], "chunk_id": obj.chunk_id, "texto": obj.text}
            chunk_ingest(acting_user=request.user, record=record, index=False)
        obj.pk = Chunk.objects.only("pk").get(chunk_id=obj.chunk_id).pk
        obj.refresh_from_db()

    @admin.action(description="Accept the classifier's proposed class (classified → tagged)")
    def accept_proposal(self, request, queryset):
        _run(self, request, queryset, chunk_accept_proposal, "Tagged")

    @admin.action(description="Validate (critical classes need validate_critical_chunk)")
    def validate(self, request, queryset):
        _run(self, request, queryset, chunk_validate, "Validated")

    @admin.action(description="Index validated chunks")
    def index(self, request, queryset):
        _run(self, request, queryset, chunk_index, "Indexed")

    @admin.action(description="Validate and index")
    def validate_and_index(self, request, queryset):
        def both(*, acting_user, chunk):
            with transaction.atomic():
                chunk_index(acting_user=acting_user, chunk=chunk_validate(acting_user=acting_user, chunk=chunk))

        _run(self, request, queryset, both, "Validated and indexed")

    @admin.action(description="Send back to tagging (removes from the index)")
    def send_back(self, request, queryset):
        _run(self, request, queryset, chunk_send_back, "Sent back")

    @admin.action(description="Mark for re-indexing")
    def mark_for_reindex(self, request, queryset):
        count = queryset.update(needs_reindex=True, updated_at=timezone.now())
        self.message_user(request, f"Marked {count} chunk(s); run `manage.py reindex_chunks`.", messages.SUCCESS)


@admin.register(MetadataSchema)
class MetadataSchemaAdmin(admin.ModelAdmin):
    list_display = ["version", "is_current", "created_at"]
    readonly_fields = ["is_current", "created_at"]
    actions = ["activate"]

    @admin.action(description="Make current (marks chunks of other versions for re-indexing)")
    def activate(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one schema version.", messages.ERROR)
            return
        marked = metadata_schema_activate(acting_user=request.user, version=queryset.get().version)
        self.message_user(request, f"Schema activated; {marked} chunk(s) marked for re-indexing.", messages.SUCCESS)


@admin.register(OntologyRoute)
class OntologyRouteAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "tenant",
        "origin",
        "pattern",
        "confidence",
        "fallback",
        "strategy",
        "policy_version",
        "duration_ms",
    ]
    list_filter = ["pattern", "strategy", "origin", "fallback"]
    list_select_related = ["tenant"]
    readonly_fields = [f.name for f in OntologyRoute._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class StrategyPolicyForm(forms.ModelForm):
    rollback_to = forms.IntegerField(required=False, min_value=1, help_text="restore this version's state and bounds")

    class Meta:
        model = StrategyPolicy
        fields = ["max_shift", "prior_strength"]


@admin.register(StrategyPolicy)
class StrategyPolicyAdmin(admin.ModelAdmin):
    """The learned strategy policy per tenant: curators set its bounds, freeze it, reset it
    to the deterministic matrix or roll it back to a recorded version."""

    form = StrategyPolicyForm
    list_display = ["tenant", "version", "frozen", "max_shift", "prior_strength", "updated_at"]
    list_filter = ["frozen"]
    list_select_related = ["tenant"]
    readonly_fields = ["tenant", "version", "frozen", "state", "updated_at", "history"]
    actions = ["freeze", "unfreeze", "reset"]

    def has_add_permission(self, request):
        return False

    @admin.display(description="versions (newest first)")
    def history(self, obj):
        rows = obj.revisions.order_by("-version")[:20]
        return "; ".join(f"v{r.version} {r.note}" for r in rows)

    def save_model(self, request, obj, form, change):
        """Bounds and rollbacks go through the services (a new version + revision each)."""
        try:
            if form.cleaned_data.get("rollback_to"):
                policy_rollback(tenant=obj.tenant, version=form.cleaned_data["rollback_to"], acting_user=request.user)
            if {"max_shift", "prior_strength"} & set(form.changed_data):
                policy_set_bounds(
                    tenant=obj.tenant,
                    max_shift=form.cleaned_data["max_shift"],
                    prior_strength=form.cleaned_data["prior_strength"],
                    acting_user=request.user,
                )
        except ApplicationError as exc:
            self.message_user(request, f"{exc.code}: {exc.message}", level=messages.ERROR)

    @admin.action(description="Freeze (feedback no longer moves the policy)")
    def freeze(self, request, queryset):
        for policy in queryset:
            policy_freeze(tenant=policy.tenant, frozen=True, acting_user=request.user)

    @admin.action(description="Unfreeze")
    def unfreeze(self, request, queryset):
        for policy in queryset:
            policy_freeze(tenant=policy.tenant, frozen=False, acting_user=request.user)

    @admin.action(description="Reset to the deterministic matrix")
    def reset(self, request, queryset):
        for policy in queryset:
            policy_reset(tenant=policy.tenant, acting_user=request.user)
