"""The order in which the turn's knowledge reaches the agent: the focus's packages first.

The router fuses every signal into one score, so a rewritten message that names
the page and the tab ("…, na aba Componentes da Permissão de Trabalho") can lift
the parents' packages above the package documenting the focused element. The
seed's contract is an order, not a score: the packages tied to the focus (by
their ``semantic_ids`` or the registry's links), then its parents' (nearest
first, the same chain the router climbs: ``common.identifiers.focus_ancestors``), then the wiki-link neighbours of the focus's packages, then everything
else in the router's order. Pure code: the caller passes the lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from common.identifiers import focus_ancestors


def focus_first(
    package_ids: Iterable[str],
    *,
    semantic_context: Mapping[str, Any] | None,
    semantic_ids_of: Callable[[str], Sequence[str]],
    registry_links: Mapping[str, Sequence[str]] | None = None,
    wikilinks_of: Callable[[str], Sequence[str]] | None = None,
) -> list[str]:
    """``package_ids`` (deduplicated) reordered focus → parents → neighbours → the rest (stable)."""
    ids = list(dict.fromkeys(package_ids))
    focus = (semantic_context or {}).get("focus")
    if not focus or len(ids) < 2:
        return ids
    links = registry_links or {}
    chain = [focus, *focus_ancestors(focus, semantic_context.get("parent_ids") or ())]
    rest = len(chain) + 1

    def level(pid: str) -> int:
        own = {s.lower() for s in semantic_ids_of(pid)}
        for depth, sid in enumerate(chain):
            if sid.lower() in own or pid in links.get(sid, ()):
                return depth
        return rest

    levels = {pid: level(pid) for pid in ids}
    if wikilinks_of is not None:
        # One hop, both directions, as the router's wiki-link signal.
        focus_packages = {pid for pid in ids if levels[pid] == 0}
        near = {n for pid in focus_packages for n in wikilinks_of(pid)}
        for pid in ids:
            if levels[pid] == rest and (pid in near or focus_packages.intersection(wikilinks_of(pid))):
                levels[pid] = rest - 0.5  # after the farthest parent, before the rest
    return sorted(ids, key=lambda pid: levels[pid])  # stable: the router's order within a level
