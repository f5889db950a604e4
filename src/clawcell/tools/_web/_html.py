"""Readable text from fetched bodies: HTML to Markdown or plain text, other text decoded.

HTML goes through Beautiful Soup (the built-in `html.parser`, so no C dependency) and
markdownify, both MIT-licensed, pure Python and maintained for over a decade: Beautiful Soup
copes with broken markup and lets us drop what is not content (scripts, styles, navigation,
forms) before markdownify renders headings, lists, links, tables and code as Markdown. Bodies
are decoded first, with allowed text encodings only (`_charset`).

Both libraries are pure Python on a worker thread nobody can stop, so extraction is bounded:
at most `MAX_MARKUP_CHARS` characters of markup are parsed (the rest is reported as cut), the
parser is fed 32 KiB at a time and markdownify checks the deadline at every tag, so a page that
is slow to convert ends with `timeout` at the fetch's deadline instead of running on. A tree too
deep for markdownify's recursion falls back to plain text.
"""

from __future__ import annotations

import re
import time
import warnings
from typing import Any, Final, Literal, cast

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning
from bs4.builder._htmlparser import BeautifulSoupHTMLParser, HTMLParserTreeBuilder
from markdownify import MarkdownConverter

from ..._lazy import value_class
from ...errors import ToolError
from ._charset import decode_text, html_codec

__all__ = [
    "MAX_MARKUP_CHARS",
    "ExtractMode",
    "Extracted",
    "check_deadline",
    "extract",
    "is_readable",
    "timed_out",
]

ExtractMode = Literal["markdown", "text"]
MAX_TITLE: Final = 300
MAX_MARKUP_CHARS: Final = 1_000_000
_FEED: Final = 32 * 1024
_NOT_CONTENT: Final = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe",
    "nav", "footer", "aside", "form", "button", "head",
)  # fmt: skip
_BLANK_RUNS: Final = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES: Final = ("text/", "application/json", "application/xml", "application/javascript")


@value_class
class Extracted:
    """Readable text of a body.

    Attributes:
        text: The text (Markdown for HTML in `markdown` mode).
        title: The HTML `<title>`, when there is one.
        extractor: `"markdown"`, `"text"` (HTML as plain text) or `"raw"` (a text body).
        cut: Markup past `MAX_MARKUP_CHARS` was not read.
    """

    text: str
    title: str | None
    extractor: Literal["markdown", "text", "raw"]
    cut: bool = False


def is_readable(mime: str, body: bytes) -> bool:
    """Whether a body of this media type can be turned into text."""
    if mime in _HTML_TYPES or mime.startswith(_TEXT_TYPES) or mime.endswith(("+json", "+xml")):
        return True
    return not mime and b"\x00" not in body[:4096]


def timed_out() -> ToolError:
    """The `timeout` error of an extraction that ran past the fetch's deadline."""
    return ToolError(
        "Reading the page took longer than the fetch's time budget; fetch a smaller page "
        "or raise `timeout_seconds`.",
        code="timeout",
    )


def check_deadline(deadline: float) -> None:
    """Raise `timed_out()` once `time.monotonic()` has passed `deadline`."""
    if time.monotonic() > deadline:
        raise timed_out()


class _Builder(HTMLParserTreeBuilder):
    """`html.parser` fed in pieces, with the deadline checked between them."""

    def __init__(self, deadline: float) -> None:
        super().__init__()
        self._deadline = deadline

    def feed(
        self, markup: Any, _parser_class: type[BeautifulSoupHTMLParser] = BeautifulSoupHTMLParser
    ) -> None:
        deadline = self._deadline

        class _Pieces(_parser_class):
            def feed(self, data: str) -> None:
                for start in range(0, len(data), _FEED):
                    check_deadline(deadline)
                    super().feed(data[start : start + _FEED])

        super().feed(markup, _Pieces)


class _Converter(MarkdownConverter):
    """markdownify, checking the deadline at every tag."""

    def __init__(self, deadline: float, **options: Any) -> None:
        super().__init__(**options)
        self._deadline = deadline

    def process_tag(self, node: Any, parent_tags: Any = None) -> Any:
        check_deadline(self._deadline)
        # markdownify's stub does not declare `process_tag`, the hook every tag goes through.
        return cast(Any, super()).process_tag(node, parent_tags)


def _looks_like_html(mime: str, body: bytes) -> bool:
    if mime in _HTML_TYPES:
        return True
    return not mime and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))


def extract(
    body: bytes, *, mime: str, charset: str | None, mode: ExtractMode, deadline: float
) -> Extracted:
    """The readable text of a body of media type `mime`, or `timeout` past `deadline`."""
    if not _looks_like_html(mime, body):
        return Extracted(text=decode_text(body, charset), title=None, extractor="raw")
    markup = body.decode(html_codec(body, charset), errors="replace")
    cut = len(markup) > MAX_MARKUP_CHARS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(markup[:MAX_MARKUP_CHARS], builder=_Builder(deadline))
    check_deadline(deadline)
    title = soup.title.get_text(" ", strip=True)[:MAX_TITLE] if soup.title is not None else None
    for tag in soup(_NOT_CONTENT):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    text, extractor = _render(main, mode, deadline)
    return Extracted(
        text=_BLANK_RUNS.sub("\n\n", text).strip(),
        title=title or None,
        extractor=extractor,
        cut=cut,
    )


def _render(main: Any, mode: ExtractMode, deadline: float) -> tuple[str, ExtractMode]:
    if mode == "markdown":
        try:
            converter = _Converter(deadline, heading_style="ATX", strip=["img"])
            return converter.convert_soup(main), "markdown"
        except RecursionError:
            pass  # nested deeper than markdownify can recurse: plain text still reads it
    return main.get_text("\n", strip=True), "text"
