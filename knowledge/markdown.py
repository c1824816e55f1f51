"""Markdown rendering for previews and wiki-link extraction."""

import re

import markdown as markdown_lib
import nh3

from common.identifiers import WIKILINK_RE, wikilink_targets

_ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code", "pre", "blockquote",
    "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a", "span",
}  # fmt: skip


def extract_wikilinks(body: str) -> list[str]:
    """Targets of [[LINKS]] in order of first appearance, as written (the router's grammar)."""
    return wikilink_targets(body)


def render_markdown(body: str, known_ids: set[str] | None = None) -> str:
    """Sanitized HTML; wiki-links become spans marked known or unknown."""

    def link(match: re.Match) -> str:
        target = match.group(1).strip()
        state = "known" if known_ids is None or target in known_ids else "unknown"
        return f'<span class="wikilink wikilink-{state}">[[{target}]]</span>'

    html = markdown_lib.markdown(WIKILINK_RE.sub(link, body or ""), extensions=["tables", "fenced_code"])
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes={"a": {"href", "title"}, "span": {"class"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
    )
