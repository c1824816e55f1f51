"""System prompt and LLM request for one provider call.

The prompt is rebuilt on every call from the live catalog: the agent's own
instructions, the reply contract, the compact catalog, the knowledge set the
router chose for this message, and the bodies of the packages the session
collected with s=99, read fresh (sessions keep IDs, never text).
"""

from __future__ import annotations

from dataclasses import dataclass

from llm import CatalogItem, ChatMessage, KnowledgeItem, LLMRequest

REPLY_CONTRACT = """\
## How to reply
Reply with exactly one JSON object and nothing else:
- {{"s": 0, "message": "<your answer to the user>"}} to answer;
- {{"s": 99, "context_needed": "<PACKAGE_ID>"}} to load one package of the catalog below \
(procedures: "::<PACKAGE_ID>"); you will be called again with its content;
- {{"s": 90, "reason": "<why>"}} to hand the conversation over to a person.
Answer only from the knowledge given here. If the answer needs a package you have not \
received, ask for it with s=99 (at most {budget} per user message). If nothing in the \
catalog covers the question, hand off with s=90; never make up prices, deadlines or facts."""


REQUEST_OPTIONS = ("temperature", "top_p", "max_tokens", "seed")  # agent settings sent with each call


@dataclass(frozen=True)
class KnowledgeSet:
    """What the router chose for one message.

    ``full_ids``: packages whose bodies are delivered; ``listed_ids``: offered by
    ID, title and one line (the agent fetches them with s=99); procedures among
    them are offered by name (``::ID``).
    """

    full_ids: tuple[str, ...] = ()
    listed_ids: tuple[str, ...] = ()
    # the ontology route's structured context (one section per CoT step), for ontology agents
    ontology_context: str = ""


@dataclass(frozen=True)
class DeliveredPackage:
    package_id: str
    revision: int


@dataclass(frozen=True)
class PreparedCall:
    request: LLMRequest
    delivered: tuple[DeliveredPackage, ...]


def _section(entry) -> str:
    name = f"::{entry.package_id}" if entry.is_procedure else entry.package_id
    return f"### {name} — {entry.title} (revision {entry.revision})\n{entry.body.strip()}"


# The catalog's prompt listing and request items, for one catalog object (one per version): a
# turn rebuilt them on every call, for every package, though they change only with the version.
_catalog_parts_cache: tuple = (None, "", ())


def _catalog_parts(catalog) -> tuple[str, tuple[CatalogItem, ...]]:
    global _catalog_parts_cache
    cached_for, rendered, items = _catalog_parts_cache
    if cached_for is catalog:
        return rendered, items
    rendered = catalog.render()
    items = tuple(
        CatalogItem(e.package_id, e.title, e.summary, e.kind, tuple(e.aliases), tuple(e.keywords))
        for e in catalog.entries
    )
    _catalog_parts_cache = (catalog, rendered, items)  # one assignment: threads see all or nothing
    return rendered, items


def build_call(
    *,
    agent,
    catalog,
    knowledge_set: KnowledgeSet,
    collected_ids: list[str],
    history: list[tuple[str, str]],
    user_text: str,
    budget: int,
    ui_context: str = "",
) -> PreparedCall:
    """Assemble the LLM request; packages no longer in the active catalog are skipped."""

    knowledge = [e for e in (catalog.get(pid) for pid in knowledge_set.full_ids) if e is not None]
    seen = {e.package_id for e in knowledge}
    collected = []
    for pid in collected_ids:
        entry = catalog.get(pid)
        if entry is not None and entry.package_id not in seen:
            collected.append(entry)
            seen.add(entry.package_id)

    catalog_listing, catalog_items = _catalog_parts(catalog)
    parts = [agent.system_prompt.strip(), REPLY_CONTRACT.format(budget=budget)]
    parts.append(f"## Package catalog (version {catalog.version})\n{catalog_listing}")
    if knowledge:
        parts.append("## Knowledge for this message\n" + "\n\n".join(_section(e) for e in knowledge))
    if knowledge_set.ontology_context:
        parts.append("## Ontology reasoning for this message\n" + knowledge_set.ontology_context)
    if collected:
        parts.append("## Packages you loaded\n" + "\n\n".join(_section(e) for e in collected))
    listed = [
        e for e in (catalog.get(pid) for pid in knowledge_set.listed_ids) if e is not None and e.package_id not in seen
    ]
    if listed:
        lines = [f"- {'::' if e.is_procedure else ''}{e.package_id} — {e.title}: {e.summary}" for e in listed]
        parts.append("## Also relevant (not loaded; ask with s=99 if needed)\n" + "\n".join(lines))
    if ui_context:
        # Minimized by the context engine: names and ids, never record fields or masked data.
        parts.append("## Where the user is\n" + ui_context)
    system_prompt = "\n\n".join(p for p in parts if p)

    messages = [ChatMessage("system", system_prompt)]
    messages.extend(ChatMessage(role, text) for role, text in history)
    messages.append(ChatMessage("user", user_text))

    delivered_entries = knowledge + collected
    request = LLMRequest(
        messages=tuple(messages),
        model=agent.model or "",
        knowledge=tuple(KnowledgeItem(e.package_id, e.title, e.body) for e in delivered_entries),
        catalog=catalog_items,
        options={k: v for k, v in (agent.settings or {}).items() if k in REQUEST_OPTIONS},
    )
    return PreparedCall(request, tuple(DeliveredPackage(e.package_id, e.revision) for e in delivered_entries))
