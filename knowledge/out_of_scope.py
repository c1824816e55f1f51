"""The model proposes out-of-scope questions for the catalog, on a curator's request.

Curators keep sets of questions their users ask that no package answers (``OutOfScopeSet``: a
background of the catalog's own, docs/retrieval.md "Out-of-scope questions"). Writing them means
knowing what the catalog does *not* cover; a model that reads the catalog's titles and summaries can
propose a first set. The proposal is saved as an **inactive** set for curators to read, edit and
activate: nothing a model wrote changes routing until a curator says so.

With the offline provider nothing is asked and nothing is stored. Logs carry IDs, statuses and
counts only, never package text or questions.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError

from knowledge.models import OutOfScopeSet, Package
from knowledge.retrieval.dense import MAX_EXAMPLE_QUESTION_LENGTH, MAX_OUT_OF_SCOPE_QUESTIONS
from knowledge.services import out_of_scope_set_save
from llm.base import ChatMessage, LLMRequest, ProviderUnavailable, reply_json_object

logger = logging.getLogger(__name__)

LANGUAGES = ("pt", "en", "es")
QUESTIONS_PER_LANGUAGE = 15
CATALOG_MAX_CHARS = 24_000  # the titles and summaries the model reads, at most
SYSTEM_PROMPT = (
    "You help a customer-service team. Below is the list of the help-centre articles of one business "
    "(ID, title, summary). Propose questions this business's customers would plausibly send to its "
    "assistant that NONE of these articles answers: about two thirds about things next to the business "
    "(a service it does not offer, another company's or public body's job people confuse with it), the "
    "rest off-topic messages its users might still type. Drop any question an article answers even in "
    f'part. Answer with JSON only: {{"pt": [...], "en": [...], "es": [...]}}, {QUESTIONS_PER_LANGUAGE} '
    "questions in Brazilian Portuguese as real users write them, and the same questions in English and "
    "in Spanish, in the same order, each under 25 words. No explanations."
)


def _provider():
    """The configured model, or None for the offline provider (it cannot propose anything)."""
    from llm.runtime import curation_provider

    return curation_provider()


def model_configured() -> bool:
    from llm.runtime import llm_settings

    return llm_settings().provider != "offline"


def catalog_digest() -> str:
    """The active packages' IDs, titles and summaries, one per line, cut at ``CATALOG_MAX_CHARS``."""
    lines, size = [], 0
    rows = Package.objects.filter(is_active=True).order_by("position", "package_id")
    for package_id, title, summary in rows.values_list("package_id", "title", "summary"):
        line = f"{package_id}: {title} — {summary}"
        if size + len(line) > CATALOG_MAX_CHARS:
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def parse_questions(text: str) -> list[str]:
    """The model's JSON answer (tolerating a code fence or prose around it) → its questions, language
    by language, too long ones dropped, at most ``MAX_OUT_OF_SCOPE_QUESTIONS``; ValueError without any."""
    data = reply_json_object(text)
    questions: list[str] = []
    seen: set[str] = set()
    for lang in LANGUAGES:
        values = data.get(lang)
        for q in (values if isinstance(values, list) else [])[:QUESTIONS_PER_LANGUAGE]:
            if not isinstance(q, str):
                continue
            q = " ".join(q.split())
            if q and len(q) <= MAX_EXAMPLE_QUESTION_LENGTH and q.lower() not in seen:
                seen.add(q.lower())
                questions.append(q)
    if not questions:
        raise ValueError("no questions")
    return questions[:MAX_OUT_OF_SCOPE_QUESTIONS]


def out_of_scope_propose_request() -> str | None:
    """Queue the model's proposal (Celery ``knowledge.propose_out_of_scope``); the key its set will be
    named after, or None when the broker cannot be reached (nothing is queued, the curator is told)."""
    import uuid

    from knowledge.tasks import propose_out_of_scope

    key = uuid.uuid4().hex
    try:
        propose_out_of_scope.delay(key)
    except Exception as exc:  # a boundary: any broker failure means "not queued", never a 500
        logger.warning("out_of_scope_propose_not_queued error=%s", type(exc).__name__)
        return None
    return key


def proposal_name(request_key: str) -> str:
    return f"Proposed by the model ({request_key[:12]})"


def out_of_scope_propose(*, request_key: str) -> OutOfScopeSet | None:
    """Ask the model for out-of-scope questions and store them as an inactive set named after
    ``request_key`` (a redelivered task finds it and asks nothing). None when no model is configured,
    the catalog is empty, or the model's answer holds no question (logged)."""
    from llm.runtime import llm_settings

    existing = OutOfScopeSet.objects.filter(name=proposal_name(request_key)).first()
    if existing is not None:
        return existing
    provider = _provider()
    digest = catalog_digest()
    if provider is None or not digest:
        return None
    request = LLMRequest(
        messages=(ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", digest)),
        model=llm_settings().model,
        options={"temperature": 0},
    )
    try:
        questions = parse_questions(provider.complete(request).text)
    except (ProviderUnavailable, ValueError) as exc:
        logger.info("out_of_scope_propose_failed reason=%s", getattr(exc, "reason", "parse"))
        return None
    try:
        proposed = out_of_scope_set_save(
            out_of_scope_set=OutOfScopeSet(name=proposal_name(request_key), questions=questions, is_active=False)
        )
    except ValidationError:
        logger.info("out_of_scope_propose_failed reason=invalid")
        return None
    logger.info("out_of_scope_proposed id=%s questions=%d", proposed.pk, len(questions))
    return proposed
