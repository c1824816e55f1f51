import hashlib
import json

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models, transaction
from django.db.models.functions import Now

from common.identifiers import PACKAGE_ID_PATTERN
from knowledge.feedback_version import feedback_version_bump

CONTENT_FIELDS = ("title", "summary", "kind", "strict", "aliases", "keywords", "semantic_ids", "source", "body")


def content_hash(data: dict) -> str:
    canonical = json.dumps({f: data.get(f) for f in CONTENT_FIELDS}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class PackageKind(models.TextChoices):
    KNOWLEDGE = "knowledge", "Knowledge"
    RULE = "rule", "Rule"
    PROCEDURE = "procedure", "Procedure"


class PackageOrigin(models.TextChoices):
    BUNDLED = "bundled", "Bundled file"
    ADMIN = "admin", "Created in the admin"


class StampedQuerySet(models.QuerySet):
    """``update()`` moves ``updated_at`` (the row's stamp) unless the caller sets it.

    ``save()`` moves it through ``auto_now``; a queryset ``update()`` does not, and the catalog's
    incremental reload (knowledge/catalog.py) re-reads only the rows whose stamp moved, so an
    ``update()`` that left it would stay invisible to every running process. ``bulk_update`` goes
    through here too. Raw SQL does not: after a raw edit, run ``manage.py reindex``.
    """

    def update(self, **kwargs):
        kwargs.setdefault("updated_at", Now())
        return super().update(**kwargs)


class Package(models.Model):
    """A knowledge package: its live content and its state in the effective catalog.

    Bundled packages mirror a Markdown file (`bundled_content`); an admin edit
    overrides it (`is_overridden`), deactivation hides it, reset goes back to the
    file. The live fields always equal `live_revision`'s snapshot.
    """

    package_id = models.CharField(
        "ID", max_length=64, unique=True, validators=[RegexValidator(PACKAGE_ID_PATTERN, "Use UPPER_SNAKE_CASE.")]
    )
    origin = models.CharField(max_length=16, choices=PackageOrigin.choices, default=PackageOrigin.ADMIN)
    position = models.PositiveIntegerField(default=0, help_text="Catalog order (lower first).")
    is_active = models.BooleanField("active", default=True)
    is_overridden = models.BooleanField("overridden", default=False)

    title = models.CharField(max_length=200)
    summary = models.CharField(max_length=300)
    kind = models.CharField(max_length=16, choices=PackageKind.choices, default=PackageKind.KNOWLEDGE)
    strict = models.BooleanField(default=False, help_text="Rules only: strict rules always arrive in full.")
    aliases = models.JSONField(default=list, blank=True)
    keywords = models.JSONField(default=list, blank=True)
    semantic_ids = models.JSONField(default=list, blank=True)
    source = models.CharField(max_length=300, blank=True)
    body = models.TextField()

    bundled_content = models.JSONField(null=True, blank=True, editable=False)
    bundled_path = models.CharField(max_length=500, blank=True, editable=False)
    revision_number = models.PositiveIntegerField(default=0, editable=False)
    content_hash = models.CharField(max_length=64, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = StampedQuerySet.as_manager()

    class Meta:
        ordering = ["position", "package_id"]
        permissions = [("curate_package", "Can curate knowledge packages")]

    def __str__(self) -> str:
        return self.package_id

    def content(self) -> dict:
        return {f: getattr(self, f) for f in CONTENT_FIELDS}


class PackageRevision(models.Model):
    """An immutable snapshot of a package after one saved change."""

    class Action(models.TextChoices):
        CREATED = "created", "Created"
        EDITED = "edited", "Edited"
        BUNDLED_SYNC = "bundled_sync", "Bundled file loaded"
        IMPORTED = "imported", "Imported"
        ACTIVATED = "activated", "Activated"
        DEACTIVATED = "deactivated", "Deactivated"
        REVERTED = "reverted", "Reverted"
        RESET = "reset", "Reset to bundled"

    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    action = models.CharField(max_length=16, choices=Action.choices)
    data = models.JSONField(help_text="Content fields plus is_active and is_overridden at this revision.")
    content_hash = models.CharField(max_length=64)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["package", "-number"]
        constraints = [models.UniqueConstraint(fields=["package", "number"], name="unique_package_revision_number")]

    def __str__(self) -> str:
        # package_id here would be the foreign key's integer, not the package's ID.
        return f"{self.package.package_id} r{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Package revisions are immutable.")
        super().save(*args, **kwargs)


class CatalogState(models.Model):
    """A single row whose version bumps on every catalog change.

    Every process compares it with the version of its in-memory catalog and
    rebuilds on the next request after a change: no restart, no stale cache.
    """

    version = models.PositiveBigIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"catalog v{self.version}"


class FeedbackState(models.Model):
    """A single row: the last change number given to a FetchFeedback row.

    A write takes this row's lock first and stamps its rows with the next
    number, so numbers are given in commit order: a process that has seen
    number N has seen every change numbered up to N and loads only newer rows.
    """

    seq = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"feedback change {self.seq}"


def feedback_seq_next() -> int:
    """The next change number, under the state row's lock (held to commit: numbers follow commit order).

    Taken before any feedback row is locked, so two writers never wait on each other in opposite orders.
    """
    FeedbackState.objects.get_or_create(pk=1)
    state = FeedbackState.objects.select_for_update().get(pk=1)
    state.seq += 1
    state.save(update_fields=["seq"])
    return state.seq


class FetchFeedbackQuerySet(models.QuerySet):
    """``update()`` and ``delete()`` are seen by every router on its next route.

    Each process holds a snapshot of the table and, when the feedback version moves, reads only
    the rows numbered above the highest it holds (knowledge/feedback.py). A queryset ``update()``
    (an edit in the shell, a data fix, ``bulk_update``) kept the rows' numbers and moved no
    version: the edit stayed unseen until a full re-read. Here it takes a new change number
    unless the caller sets one, and both bump the version on commit. ``Model.delete()`` (the
    admin's) goes around the queryset: its callers bump (``feedback_rows_deleted``). Raw SQL
    does neither.
    """

    def update(self, **kwargs):
        with transaction.atomic(using=self.db):
            if "seq" not in kwargs:
                kwargs["seq"] = feedback_seq_next()
            changed = super().update(**kwargs)
        transaction.on_commit(feedback_version_bump, using=self.db)
        return changed

    def delete(self):
        deleted = super().delete()
        transaction.on_commit(feedback_version_bump, using=self.db)
        return deleted


class FetchFeedback(models.Model):
    """An entry the agent fetched after it was only listed for a question.

    One row per (normalized question, package, tenant). `weight` is an
    exponentially decayed count as of `last_fetched_at`: each fetch adds 1 to
    the decayed value; readers decay it to "now" with the half-life setting.
    An entry whose weight stays above the threshold arrives in full the next
    time the same (or a close) question is asked.
    """

    query_key = models.CharField(
        max_length=500, help_text="The question's analyzed terms, sorted: order, case and stop words ignored."
    )
    package_id = models.CharField("package ID", max_length=64, db_index=True)
    tenant = models.ForeignKey(
        "accounts.Tenant", null=True, blank=True, on_delete=models.CASCADE, related_name="+",
        help_text="Empty: learnt for every tenant.",
    )  # fmt: skip
    listed_then_fetched = models.PositiveIntegerField(default=0)
    weight = models.FloatField(default=0.0, help_text="Decayed fetch count as of the last fetch.")
    signature = models.JSONField(
        default=list,
        blank=True,
        help_text="The router's best entries for the question before feedback: another wording "
        "with the same best entries is the same need.",
    )
    question_vector = models.BinaryField(
        null=True,
        blank=True,
        editable=False,
        help_text="The question part's sentence-embedding vector (float32): paraphrases inherit by cosine.",
    )
    question_vector_model = models.CharField(
        max_length=100,
        null=True,
        blank=True,
        editable=False,
        help_text="The embedding model of question_vector; a vector of another model (or none) is ignored.",
    )
    seq = models.PositiveBigIntegerField(
        default=0,
        # In the database too: a process on code before migration 0008 inserts rows without it.
        db_default=0,
        db_index=True,
        editable=False,
        help_text="Commit-ordered change number (FeedbackState): processes load only rows newer than theirs.",
    )
    last_fetched_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects = FetchFeedbackQuerySet.as_manager()

    class Meta:
        ordering = ["-last_fetched_at"]
        verbose_name = "fetch feedback"
        verbose_name_plural = "fetch feedback"
        constraints = [
            models.UniqueConstraint(
                fields=["query_key", "package_id", "tenant"],
                name="unique_fetch_feedback_per_tenant",
                condition=models.Q(tenant__isnull=False),
            ),
            models.UniqueConstraint(
                fields=["query_key", "package_id"],
                name="unique_fetch_feedback_global",
                condition=models.Q(tenant__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.package_id} ← “{self.query_key}”"

    def weight_at(self, now, half_life_seconds: float) -> float:
        age = max((now - self.last_fetched_at).total_seconds(), 0.0)
        return self.weight * 0.5 ** (age / half_life_seconds) if half_life_seconds > 0 else self.weight


class SynonymSet(models.Model):
    """Words that mean the same thing in this catalog, applied to questions (search engines' synonym files).

    "estorno, reembolso, devolução do dinheiro, refund": a question with any
    member also looks for the others, as one query term at
    KNOWLEDGE_SYNONYM_WEIGHT. Any language; phrases allowed. Saving or
    deactivating a set bumps the catalog version, so every process rebuilds.
    """

    name = models.CharField(max_length=100, unique=True, help_text="What the set is about (for curators).")
    terms = models.JSONField(default=list, help_text="Two or more words or short phrases.")
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "synonym set"

    def __str__(self) -> str:
        return self.name


class OutOfScopeSet(models.Model):
    """Questions this catalog's users ask that no package answers ("Vocês vendem pacote com hotel?" to an
    airline), kept by curators: a background of the catalog's own.

    A message closer to one of them than to any package (by ``out_of_scope_margin``) gets no full body;
    what the router found is listed, so the agent says it does not know instead of reading the nearest
    article as the answer (docs/retrieval.md, "Out-of-scope questions"). Any language. Saving or
    deactivating a set bumps the catalog version, so every process rebuilds.
    """

    name = models.CharField(max_length=100, unique=True, help_text="What the set is about (for curators).")
    questions = models.JSONField(default=list, help_text="One question per line, as users would write it.")
    is_active = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "out-of-scope question set"

    def __str__(self) -> str:
        return self.name


class RevisionSearchTerms(models.Model):
    """English and Spanish search terms, and example questions, for one revision, proposed by the LLM
    and reviewed by a curator.

    Accepted terms of a package's current revision are indexed as their own
    field, at a lower weight than curated keywords; accepted example questions
    are blended into the revision's vector (docs/retrieval.md, "Example questions").
    """

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed (waiting for a curator)"
        ACCEPTED = "accepted", "Accepted"
        FAILED = "failed", "The model gave no usable answer"

    revision = models.OneToOneField(PackageRevision, on_delete=models.CASCADE, related_name="search_terms")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROPOSED)
    proposed = models.JSONField(
        default=dict, blank=True, help_text='What the model proposed: {"en": [...], "es": [...]}'
    )
    accepted = models.JSONField(default=list, blank=True, help_text="The terms indexed with the revision.")
    accepted_questions = models.JSONField(
        default=list,
        blank=True,
        help_text="Example questions: blended into the revision's vector; their words rank it for messages of one part.",
    )
    questions_changed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the accepted questions last changed: a vector older than this is re-embedded by the sweep.",
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    objects = StampedQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        verbose_name = "search terms"
        verbose_name_plural = "search terms"

    def __str__(self) -> str:
        return f"{self.revision} search terms"


class RevisionEmbedding(models.Model):
    """A revision's sentence-embedding vector for the router's dense signal (knowledge/embeddings.py).

    Computed when the revision is written (a Celery task), or by `embed_packages`;
    a revision without one (or with another model's) simply lacks the signal.
    """

    revision = models.OneToOneField(PackageRevision, on_delete=models.CASCADE, related_name="embedding")
    model_id = models.CharField(max_length=100, help_text="Vectors of different models are not comparable.")
    text_digest = models.CharField(max_length=64, help_text="sha256 of the model id and the embedded text.")
    vector = models.BinaryField(help_text="float32 little-endian, unit length.")
    example_vectors = models.BinaryField(
        default=b"",
        blank=True,
        help_text="The accepted example questions' own vectors, one after another (float32 little-endian); "
        "empty without any.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.revision} embedding ({self.model_id})"
