"""Curation-time expansion: the LLM proposes English and Spanish search terms, and example questions,
when a revision is saved.

A catalog written in Portuguese only is found by English and Spanish
questions through the lexicon; what a dictionary cannot know (product names
in use, colloquial phrasings) a model can propose once per revision, off the
request path. Curators see, edit and accept the proposal in the admin
(*Knowledge › Search terms*); accepted terms are stored with the revision and
indexed at ``KNOWLEDGE_FIELD_WEIGHTS["search_terms"]``, below curated keywords.
Accepted example questions (what a customer who has not read the article would
ask, in Portuguese, English and Spanish) are blended into the revision's
vector (``knowledge.retrieval.dense.with_examples``): accepting them re-embeds
the revision.

With the offline provider nothing is asked and nothing is stored: it cannot
translate, and an empty proposal would only be noise for curators.
Logs carry IDs, statuses and counts only, never package text or terms.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from knowledge.models import CatalogState, PackageRevision, RevisionSearchTerms
from knowledge.retrieval.dense import MAX_EXAMPLE_QUESTION_LENGTH
from knowledge.retrieval.dense import clean_questions as dense_clean_questions
from llm.base import ChatMessage, LLMRequest, ProviderUnavailable, reply_json_object

logger = logging.getLogger(__name__)

LANGUAGES = ("en", "es")
MAX_TERMS_PER_LANGUAGE = 12
MAX_TERM_LENGTH = 60
# Revisions whose content changed; (de)activation changes nothing to search for.
CONTENT_ACTIONS = {
    PackageRevision.Action.CREATED,
    PackageRevision.Action.EDITED,
    PackageRevision.Action.IMPORTED,
    PackageRevision.Action.BUNDLED_SYNC,
    PackageRevision.Action.REVERTED,
    PackageRevision.Action.RESET,
}
QUESTION_LANGUAGES = ("pt", "en", "es")
QUESTIONS_PER_LANGUAGE = 3
SYSTEM_PROMPT = (
    "You help people find help-centre articles written in Portuguese. For the article below, "
    'answer with JSON only: {"en": [...], "es": [...], "questions": {"pt": [...], "en": [...], "es": [...]}}. '
    '"en" and "es": up to 12 short search terms per language '
    "(words or phrases of 1 to 4 words) that an English or a Spanish speaker would type to find it. "
    "Translate the article's key terms and add the everyday words people use. "
    '"questions": 3 questions per language that a customer who has not read the article would ask and '
    "that the article answers, in everyday words (not the article's title or its own terms where a "
    "customer would say it differently), each under 20 words. No explanations."
)


def _provider():
    """The configured model, or None for the offline provider (it cannot translate)."""
    from llm.runtime import curation_provider

    return curation_provider()


def _offline() -> bool:
    from llm.runtime import llm_settings

    return llm_settings().provider == "offline"


def _enabled() -> bool:
    return bool(getattr(settings, "KNOWLEDGE_SEARCH_TERMS_ON_SAVE", True)) and not _offline()


def search_terms_request(revision: PackageRevision) -> None:
    """After the revision's transaction commits, ask for its search terms (Celery), when a real model is configured.

    A revision that changes no content (activation, deactivation) asks nothing and keeps its
    predecessor's record instead (``_carried_forward``)."""
    if revision.action not in CONTENT_ACTIONS:
        _carried_forward(revision)
        return
    if not _enabled():
        return
    from knowledge.tasks import suggest_search_terms

    transaction.on_commit(lambda: suggest_search_terms.delay(revision.pk))


def _carried_forward(revision: PackageRevision) -> RevisionSearchTerms | None:
    """The previous revision's search-terms record, copied to ``revision`` (same content): the router
    reads the current revision's accepted terms and questions only, so without the copy a curator's
    accept would be lost to a deactivation and reactivation. Called before the revision's embedding is
    requested, so its vector blends the same questions in."""
    before = RevisionSearchTerms.objects.filter(
        revision__package_id=revision.package_id, revision__number=revision.number - 1
    ).first()
    if before is None:
        return None
    fields = ("status", "proposed", "accepted", "accepted_questions", "questions_changed_at", "reviewed_by_id")
    carried, _ = RevisionSearchTerms.objects.update_or_create(
        revision=revision, defaults={name: getattr(before, name) for name in fields}
    )
    logger.info("search_terms_carried revision=%s from=%s status=%s", revision.pk, before.revision_id, before.status)
    return carried


def clean_terms(raw) -> list[str]:
    """A list of terms (or comma/newline-separated text) → distinct trimmed terms, bounded in count and length."""
    if isinstance(raw, str):
        raw = [t for line in raw.splitlines() for t in line.split(",")]
    if not isinstance(raw, (list, tuple)):
        raise ValidationError("a list of terms or a comma-separated text")
    terms: list[str] = []
    for item in raw:
        if not isinstance(item, str):
            continue
        term = " ".join(item.split())
        if term and len(term) <= MAX_TERM_LENGTH and term.lower() not in {t.lower() for t in terms}:
            terms.append(term)
    if len(terms) > MAX_TERMS_PER_LANGUAGE * len(LANGUAGES):
        raise ValidationError(f"at most {MAX_TERMS_PER_LANGUAGE * len(LANGUAGES)} terms")
    return terms


def clean_questions(raw) -> list[str]:
    """``dense.clean_questions``, its errors as a form's."""
    try:
        return dense_clean_questions(raw)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


def parse_proposal(text: str) -> dict:
    """The model's JSON answer (tolerating a code fence or prose around it) →
    {"en": [...], "es": [...], "questions": {"pt": [...], "en": [...], "es": [...]}}."""
    data = reply_json_object(text)
    out: dict = {}
    for lang in LANGUAGES:
        values = data.get(lang) or []
        out[lang] = clean_terms(values if isinstance(values, list) else [])[:MAX_TERMS_PER_LANGUAGE]
    asked = data.get("questions")
    questions = {}
    for lang in QUESTION_LANGUAGES:
        values = asked.get(lang) if isinstance(asked, dict) else None
        kept = [q for q in (values if isinstance(values, list) else []) if isinstance(q, str)]
        kept = [q for q in kept if len(" ".join(q.split())) <= MAX_EXAMPLE_QUESTION_LENGTH]
        questions[lang] = clean_questions(kept[:QUESTIONS_PER_LANGUAGE])
    if any(questions.values()):
        out["questions"] = questions
    if not any(out[lang] for lang in LANGUAGES) and "questions" not in out:
        raise ValueError("no terms")
    return out


def proposed_questions(proposal: dict) -> list[str]:
    """The example questions of a proposal, in language order."""
    asked = (proposal or {}).get("questions") or {}
    return [q for lang in QUESTION_LANGUAGES for q in asked.get(lang, [])]


def search_terms_propose(*, revision_pk: int) -> RevisionSearchTerms | None:
    """Ask the model for one revision's search terms and store the proposal (idempotent per revision)."""
    from llm.runtime import llm_settings

    revision = PackageRevision.objects.select_related("package").filter(pk=revision_pk).first()
    provider = _provider()
    if revision is None or provider is None:
        return None
    existing = RevisionSearchTerms.objects.filter(revision=revision).first()
    if existing is not None and existing.status != RevisionSearchTerms.Status.FAILED:
        return existing  # a redelivered task does not ask twice
    data = revision.data
    keywords = ", ".join(data.get("keywords", []))
    article = f"# {data.get('title', '')}\n{data.get('summary', '')}\nKeywords: {keywords}\n\n"
    article += (data.get("body") or "")[:6000]
    request = LLMRequest(
        messages=(ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", article)),
        model=llm_settings().model,
        options={"temperature": 0},
    )
    try:
        reply = provider.complete(request)
        proposal = parse_proposal(reply.text)
        status = RevisionSearchTerms.Status.PROPOSED
    except (ProviderUnavailable, ValueError) as exc:
        proposal, status = {}, RevisionSearchTerms.Status.FAILED
        logger.info("search_terms_failed revision=%s reason=%s", revision.pk, getattr(exc, "reason", "parse"))
    record, _ = RevisionSearchTerms.objects.update_or_create(
        revision=revision, defaults={"proposed": proposal, "status": status}
    )
    logger.info(
        "search_terms_proposed revision=%s status=%s terms=%d questions=%d",
        revision.pk,
        status,
        sum(len(proposal.get(lang, [])) for lang in LANGUAGES),
        len(proposed_questions(proposal)),
    )
    return record


@transaction.atomic
def search_terms_accept(*, record: RevisionSearchTerms, terms, questions=None, acting_user=None) -> RevisionSearchTerms:
    """A curator's accepted (possibly edited) terms and example questions: stored with the revision;
    the catalog version is bumped. ``questions`` None keeps the accepted ones; when they change, the
    revision is re-embedded after commit (its vector blends them in, knowledge.embeddings), and the
    beat sweep re-embeds it should that task be lost (``questions_changed_at``)."""
    from knowledge.embeddings import embedding_request
    from knowledge.services import catalog_version_bump

    try:
        accepted = clean_terms(terms)
    except ValidationError as exc:
        raise ValidationError({"accepted": exc.messages}) from exc
    CatalogState.objects.get_or_create(pk=1)
    CatalogState.objects.select_for_update().get(pk=1)
    # What is stored, not the instance (an admin form has already set its fields to the new values).
    status, before = RevisionSearchTerms.objects.filter(pk=record.pk).values_list(
        "status", "accepted_questions"
    ).first() or (None, [])
    before = list(before or []) if status == RevisionSearchTerms.Status.ACCEPTED else []
    try:
        asked = before if questions is None else clean_questions(questions)
    except ValidationError as exc:
        raise ValidationError({"accepted_questions": exc.messages}) from exc
    changed = asked != before
    record.accepted = accepted
    record.accepted_questions = asked
    if changed:
        record.questions_changed_at = timezone.now()
    record.status = RevisionSearchTerms.Status.ACCEPTED
    record.reviewed_by = acting_user if getattr(acting_user, "pk", None) else None
    record.save()
    catalog_version_bump()
    if changed:
        embedding_request(record.revision)
    logger.info(
        "search_terms_accepted revision=%s terms=%d questions=%d", record.revision_id, len(accepted), len(asked)
    )
    return record
