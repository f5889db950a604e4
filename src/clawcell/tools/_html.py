"""Readable text from fetched bodies: HTML to Markdown or plain text, other text decoded.

HTML goes through Beautiful Soup (the built-in `html.parser`, so no C dependency) and
markdownify, both MIT-licensed, pure Python and maintained for over a decade: Beautiful Soup
copes with broken markup and encodings (declared charset, then `<meta charset>`, then
detection), and lets us drop what is not content (scripts, styles, navigation, forms) before
markdownify renders headings, lists, links, tables and code as Markdown.
"""

from __future__ import annotations

import codecs
import re
import warnings
from dataclasses import dataclass
from typing import Final, Literal

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning
from markdownify import MarkdownConverter

__all__ = ["ExtractMode", "Extracted", "decode_body", "extract", "is_readable"]

ExtractMode = Literal["markdown", "text"]
MAX_TITLE: Final = 300
_NOT_CONTENT: Final = (
    "script", "style", "noscript", "template", "svg", "canvas", "iframe",
    "nav", "footer", "aside", "form", "button", "head",
)  # fmt: skip
_BLANK_RUNS: Final = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES: Final = ("text/", "application/json", "application/xml", "application/javascript")


@dataclass(frozen=True, kw_only=True)
class Extracted:
    """Readable text of a body.

    Attributes:
        text: The text (Markdown for HTML in `markdown` mode).
        title: The HTML `<title>`, when there is one.
        extractor: `"markdown"`, `"text"` (HTML as plain text) or `"raw"` (a text body).
    """

    text: str
    title: str | None
    extractor: Literal["markdown", "text", "raw"]


def is_readable(mime: str, body: bytes) -> bool:
    """Whether a body of this media type can be turned into text."""
    if mime in _HTML_TYPES or mime.startswith(_TEXT_TYPES) or mime.endswith(("+json", "+xml")):
        return True
    return not mime and b"\x00" not in body[:4096]


def decode_body(body: bytes, charset: str | None) -> str:
    """`body` decoded with `charset` when Python knows it, else UTF-8; bad bytes become U+FFFD."""
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


def _looks_like_html(mime: str, body: bytes) -> bool:
    if mime in _HTML_TYPES:
        return True
    return not mime and body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))


def extract(body: bytes, *, mime: str, charset: str | None, mode: ExtractMode) -> Extracted:
    """The readable text of a body of media type `mime`."""
    if not _looks_like_html(mime, body):
        return Extracted(text=decode_body(body, charset), title=None, extractor="raw")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        known = _known(charset)
        markup = body if known is None else body.decode(known, errors="replace")
        soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(" ", strip=True)[:MAX_TITLE] if soup.title is not None else None
    for tag in soup(_NOT_CONTENT):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    if mode == "text":
        text = main.get_text("\n", strip=True)
    else:
        text = MarkdownConverter(heading_style="ATX", strip=["img"]).convert_soup(main)
    return Extracted(
        text=_BLANK_RUNS.sub("\n\n", text).strip(), title=title or None, extractor=mode
    )


def _known(charset: str | None) -> str | None:
    if charset is None:
        return None
    try:
        codecs.lookup(charset)
    except LookupError:
        return None
    return charset
