"""Step 5: the knowledge set the router delivers for the message, ordered focus first."""

from __future__ import annotations

import logging

from django.conf import settings

from common.identifiers import WIKILINK_RE
from conversations.context.routing import focus_first
from conversations.models import Session
from conversations.prompts import KnowledgeSet
from knowledge.catalog import Catalog
from knowledge.routing_service import fetch_feedback_record_for_session, route_context

from .outcome import TurnContext

logger = logging.getLogger("conversations.turns")

MAX_LINKED_PACKAGES = 3  # registry-linked bodies always delivered for the focus, its parents and the page


def knowledge_set_for_turn(*, session: Session, text: str, turn_context: TurnContext, catalog: Catalog) -> KnowledgeSet:
    """The packages the router delivers for this message (bodies) or offers (listed).

    The router searches the message with its references made explicit and
    boosts the packages tied to the user's focus, its parents and the page.
    The delivered bodies are ordered focus first (``context.routing.focus_first``):
    the packages tied to the focus (their ``semantic_ids`` or the registry's
    links), then its parents', then wiki-link neighbours, then the rest. With
    ``AGENT_KNOWLEDGE_ROUTER = False`` the agent gets the catalog alone; when the
    router fails, the catalog plus the registry's links; it fetches with s=99.
    """
    linked = [pid for pid in turn_context.routing_hints.get("linked_packages") or [] if catalog.get(pid)]
    linked = linked[:MAX_LINKED_PACKAGES]
    if not getattr(settings, "AGENT_KNOWLEDGE_ROUTER", True):
        return KnowledgeSet()
    try:
        result = route_context(
            message=text,
            semantic_context=turn_context.routing_hints.get("semantic_context") or None,
            session_key=router_session_key(session),
            tenant=session.tenant,
        )
    except Exception as exc:  # noqa: BLE001 - the router boundary: a turn degrades, never fails
        logger.error("turn.router_failed session=%s error=%s", session.pk, exc.__class__.__name__)
        return KnowledgeSet(full_ids=tuple(linked))
    full = focus_first(
        [*linked, *result.full_ids],
        semantic_context=turn_context.routing_hints.get("semantic_context"),
        semantic_ids_of=lambda pid: entry.semantic_ids if (entry := catalog.get(pid)) else (),
        registry_links=turn_context.routing_hints.get("package_links"),
        wikilinks_of=lambda pid: _wikilinks(catalog, pid),
    )
    listed = [pid for pid in [*result.listed_ids, *(p.id for p in result.procedures)] if pid not in full]
    return KnowledgeSet(full_ids=tuple(full), listed_ids=tuple(dict.fromkeys(listed)))


def _wikilinks(catalog: Catalog, package_id: str) -> list[str]:
    entry = catalog.get(package_id)
    targets = (catalog.resolve(raw) for raw in WIKILINK_RE.findall(entry.body or "")) if entry else ()
    return [t.package_id for t in targets if t is not None]


def router_session_key(session: Session) -> str:
    return f"conversation:{session.pk}"


def fetch_feedback(*, session: Session, package_id: str) -> None:
    """Teach the router: a package fetched after it was only listed ranks higher next time."""
    if not getattr(settings, "AGENT_KNOWLEDGE_ROUTER", True):
        return
    try:
        fetch_feedback_record_for_session(
            session_key=router_session_key(session), package_id=package_id, tenant=session.tenant
        )
    except Exception as exc:  # noqa: BLE001 - feedback is a hint; losing one never fails a turn
        logger.error("turn.fetch_feedback_failed session=%s error=%s", session.pk, exc.__class__.__name__)
