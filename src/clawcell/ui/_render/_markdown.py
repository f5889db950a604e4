"""Model text to safe HTML: Markdown rendered by markdown-it-py, then sanitized by nh3.

Two layers, so one mistake is not enough: markdown-it runs with raw HTML disabled (a
`<script>` in model text becomes visible text) and refuses `javascript:`-style link targets;
nh3 (ammonia) then keeps only an allowlist of tags and attributes, `http(s)`/`mailto` links
(with `rel="noopener noreferrer"`) and images whose source passes the remote media policy.

Fenced code with a language Pygments knows is highlighted on the server (token `<span
class>` names only, kept by nh3's filter; the colours come from `/highlight.css`); each code
block gets a Copy button, added after sanitizing around markup only fences produce.
"""

from __future__ import annotations

import re
from typing import Any, Final, cast

import nh3
import pygments
import pygments.formatters as _formatters
import pygments.lexers as _lexers
import pygments.util
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ...reply import is_allowed_remote_media_url
from ._markdown_rules import use_bare_links, use_task_lists

__all__ = ["PART_CHARS", "highlight_css", "join_parts", "render_markdown", "render_markdown_parts"]

_TAGS: Final = frozenset(
    {
        "a", "blockquote", "br", "code", "del", "em", "s", "h1", "h2", "h3", "h4", "h5", "h6",
        "hr", "img", "input", "li", "ol", "p", "pre", "span", "strong", "table", "tbody", "td",
        "th", "thead", "tr", "ul",
    }
)  # fmt: skip
_ATTRIBUTES: Final = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title"},
    "code": {"class"},
    "span": {"class"},
    "th": {"class"},
    "td": {"class"},
    "li": {"class"},
    "input": {"checked", "aria-label"},
}
_ALIGN: Final = re.compile(r'<(t[hd]) style="text-align:(left|right|center)">')
"""A table column's alignment: the page's CSP allows no inline style, so it becomes a class."""
_TOKEN_CLASS: Final = re.compile(r"[a-z]{1,3}[0-9]?")
_MAX_HIGHLIGHT: Final = 50_000
"""Longer code blocks are shown plain (highlighting cost grows with them)."""
_PYGMENTS: Final = cast(Any, pygments)  # Pygments ships no type hints
_LEXERS: Final = cast(Any, _lexers)
_FORMATTERS: Final = cast(Any, _formatters)
_FORMATTER: Final[object] = _FORMATTERS.HtmlFormatter(nowrap=True)
_COPY: Final = (
    '<div class="code-block"><button type="button" class="copy copy-code" '
    'aria-label="Copy code">Copy</button><pre tabindex="0"><code'
)
_SET: Final = {
    "a": {"target": "_blank"},
    "pre": {"tabindex": "0"},
    "input": {"type": "checkbox", "disabled": "disabled"},
}
"""A link opens a new tab (with `rel="noopener noreferrer"`: the reply's page keeps running and
the other page gets no handle on it); code that scrolls takes keyboard focus; the only input
kept is a disabled checkbox (a task list's, `_markdown_rules`)."""
_TABLE: Final = '<div class="table-scroll" tabindex="0" role="region" aria-label="Table"><table>'
"""A table scrolls sideways in its own focusable box (a phone's width is not a table's)."""


def _highlight(code: str, language: str, _attributes: str) -> str:
    """Pygments token spans for a fence (`""` lets markdown-it escape it plainly)."""
    if not language or len(code) > _MAX_HIGHLIGHT:
        return ""
    try:
        lexer: object = _LEXERS.get_lexer_by_name(language)
    except pygments.util.ClassNotFound:
        return ""
    return str(_PYGMENTS.highlight(code, lexer, _FORMATTER))


_MARKDOWN: Final = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    .enable(["table", "strikethrough"])
    .use(use_bare_links)
    .use(use_task_lists)
)


def _filter(element: str, attribute: str, value: str) -> str | None:
    if element == "img" and attribute == "src":
        return value if is_allowed_remote_media_url(value) else None
    if element == "code" and attribute == "class":
        return value if value.startswith("language-") else None
    if element == "span" and attribute == "class":
        return value if _TOKEN_CLASS.fullmatch(value) else None
    if element in ("th", "td") and attribute == "class":
        return value if value in ("align-left", "align-right", "align-center") else None
    if element == "li" and attribute == "class":
        return value if value == "task" else None
    if element == "input" and attribute == "aria-label":
        return value if value in ("done", "to do") else None
    return value


PART_CHARS: Final = 8_000
"""About how much Markdown source one part of a long rendering holds."""
_PART: Final = '<div class="md-part">'


def render_markdown_parts(text: str, *, part_chars: int = PART_CHARS) -> list[str]:
    """Render Markdown to sanitized HTML in parts of about `part_chars` source characters.

    Markdown is parsed once; its token stream is cut only after a top-level block closes, so
    the parts joined are exactly the whole rendering. A page can insert and lay out a long
    reply part by part (one part a frame) instead of all at once.
    """
    env: dict[str, Any] = {}
    tokens = _MARKDOWN.parse(text, env)
    groups: list[list[Token]] = [[]]
    size = 0
    for token in tokens:
        groups[-1].append(token)
        size += len(token.content)
        if token.level == 0 and token.nesting <= 0 and size >= part_chars:
            groups.append([])
            size = 0
    return [_clean(_MARKDOWN.renderer.render(g, _MARKDOWN.options, env)) for g in groups if g]


def join_parts(parts: list[str] | tuple[str, ...], *, wrap: bool = False) -> str:
    """Parts as one HTML string; more than one (or `wrap`) each in a `md-part` block (which
    the page lays out only near the viewport: `content-visibility: auto`)."""
    if len(parts) <= 1 and not wrap:
        return "".join(parts)
    return "".join(f"{_PART}{part}</div>" for part in parts)


def render_markdown(text: str) -> str:
    """Render Markdown to sanitized HTML (safe to insert into the page as is)."""
    return join_parts(render_markdown_parts(text))


def _clean(rendered: str) -> str:
    html = nh3.clean(
        _ALIGN.sub(r'<\1 class="align-\2">', rendered),
        tags=set(_TAGS),
        attributes={k: set(v) for k, v in _ATTRIBUTES.items()},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
        attribute_filter=_filter,
        set_tag_attribute_values=_SET,
    )
    # Only fences make `<pre><code` and only tables `<table>`: text and code come out escaped.
    return (
        html.replace('<pre tabindex="0"><code', _COPY)
        .replace("</code></pre>", "</code></pre></div>")
        .replace("<table>", _TABLE)
        .replace("</table>", "</table></div>")
    )


def highlight_css() -> str:
    """The token colours for highlighted code, light and dark (`prefers-color-scheme`), each
    moved just far enough from the code background to contrast with it at least 4.5:1 (WCAG
    AA; Pygments' comment colours are 3-4.4:1 on our backgrounds)."""
    light = _token_rules("default", _CODE_LIGHT)
    dark = _token_rules("monokai", _CODE_DARK)
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


_CODE_LIGHT: Final = (0xF0, 0xF2, 0xF5)
_CODE_DARK: Final = (0x26, 0x2D, 0x38)
"""`--code` in `static/app.css`, light and dark: the background code is drawn on."""
_COLOR: Final = re.compile(r"(?<![-\w])color: #([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")


def _token_rules(style: str, background: tuple[int, int, int]) -> str:
    formatter = _FORMATTERS.HtmlFormatter(style=style)
    rules = str(formatter.get_style_defs(".markdown pre code")).splitlines()
    kept = "\n".join(r for r in rules if r.startswith(".markdown pre code ."))
    return _COLOR.sub(lambda m: f"color: #{_readable(m.group(1), background)}", kept)


def _readable(colour: str, background: tuple[int, int, int]) -> str:
    """`colour` (hex) mixed towards black or white until it contrasts 4.5:1 with `background`."""
    colour = "".join(c * 2 for c in colour) if len(colour) == 3 else colour
    rgb = tuple(int(colour[i : i + 2], 16) for i in (0, 2, 4))
    target = 255 if _luminance(background) < 0.5 else 0
    for step in range(21):
        mixed = tuple(round(c + (target - c) * step / 20) for c in rgb)
        if _contrast(mixed, background) >= 4.5:
            return "".join(f"{c:02x}" for c in mixed)
    return f"{target:02x}" * 3


def _luminance(rgb: tuple[int, ...]) -> float:
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
