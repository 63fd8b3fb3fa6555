"""Markdown that agents and people write (descriptions, notes, decisions, receipts, running
summaries), rendered for the pages.

markdown-it-py renders CommonMark with raw HTML off (an HTML tag shows as text), and its own
link check drops javascript:, vbscript:, file: and data: targets; nh3 (the Rust ammonia
sanitizer) then keeps only the tags and attributes below, http(s) and mailto links, and gives
every link rel="nofollow noopener". Both steps run on every render: the allowlist holds even if
the renderer's options change. Images are not rendered (the pages load nothing from anywhere:
their Content-Security-Policy forbids it); `![alt](url)` shows as a link instead.
"""

from __future__ import annotations

import html

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

TAGS = {
    "p",
    "br",
    "hr",
    "em",
    "strong",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "a",
    "h3",
    "h4",
    "h5",
    "h6",
}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "nofollow noopener"

_renderer = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    .enable("strikethrough")
    .disable("image")
)


def render_markdown(text: str, *, top_heading: int = 3) -> str:
    """Sanitized HTML for `text`. Its headings start at `top_heading` (a `#` heading becomes
    an h3 by default), so they sit below the page's own h1 and h2."""
    tokens = _renderer.parse(text or "")
    for token in tokens:
        _demote(token, top_heading)
    rendered = _renderer.renderer.render(tokens, _renderer.options, {})
    return clean(rendered)


def clean(fragment: str) -> str:
    return nh3.clean(
        fragment,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        strip_comments=True,
    )


def plain_text(text: str) -> str:
    """The words of `text` without its Markdown, on one line (for previews in lists)."""
    rendered = _renderer.render(text or "")
    words = nh3.clean(rendered, tags=set(), attributes={})
    return " ".join(html.unescape(words).split())


def _demote(token: Token, top_heading: int) -> None:
    if token.type in ("heading_open", "heading_close"):
        level = int(token.tag[1:]) + top_heading - 1
        token.tag = f"h{min(level, 6)}"
