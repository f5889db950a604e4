"""Model text to safe HTML: Markdown rendered by markdown-it-py, then sanitized by nh3.

Two layers, so one mistake is not enough: markdown-it runs with raw HTML disabled (a
`<script>` in model text becomes visible text) and refuses `javascript:`-style link targets;
nh3 (ammonia) then keeps only an allowlist of tags and attributes, `http(s)`/`mailto` links
(with `rel="noopener noreferrer"`) and images whose source passes the remote media policy.
"""

from __future__ import annotations

from typing import Final

import nh3
from markdown_it import MarkdownIt

from ..reply import is_allowed_remote_media_url

__all__ = ["render_markdown"]

_TAGS: Final = frozenset(
    {
        "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
        "hr", "img", "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th",
        "thead", "tr", "ul",
    }
)  # fmt: skip
_ATTRIBUTES: Final = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "code": {"class"}}
_MARKDOWN: Final = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
    ["table", "strikethrough"]
)


def _filter(element: str, attribute: str, value: str) -> str | None:
    if element == "img" and attribute == "src":
        return value if is_allowed_remote_media_url(value) else None
    if element == "code" and attribute == "class":
        return value if value.startswith("language-") else None
    return value


def render_markdown(text: str) -> str:
    """Render Markdown to sanitized HTML (safe to insert into the page as is)."""
    return nh3.clean(
        _MARKDOWN.render(text),
        tags=set(_TAGS),
        attributes={k: set(v) for k, v in _ATTRIBUTES.items()},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
        attribute_filter=_filter,
    )
