"""Which text encodings `web_fetch` decodes with, and how a body's encoding is chosen.

Threat model: the server names the charset (`Content-Type: text/html; charset=...` or
`<meta charset=...>`), and Python's codec registry holds more than text encodings: `zlib`,
`base64` and `bz2` are bytes-to-bytes codecs that fail or expand, `punycode` decodes in
quadratic time, `unicode_escape` interprets escapes. Only the encodings of the WHATWG Encoding
Standard (what browsers decode), plus ASCII and Latin-1, are used; every other label is UTF-8,
bad bytes become U+FFFD. Beautiful Soup never sees bytes, so its own detection (which tries
whatever a page declares) never runs.
"""

from __future__ import annotations

import codecs
import re
from typing import Final

__all__ = ["decode_text", "html_codec", "text_codec"]

_WHATWG: Final = (
    "utf-8", "utf-16-le", "utf-16-be", "utf-16", "ascii", "latin-1", "cp866",
    "iso8859-2", "iso8859-3", "iso8859-4", "iso8859-5", "iso8859-6", "iso8859-7",
    "iso8859-8", "iso8859-10", "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16",
    "koi8-r", "koi8-u", "mac-roman", "mac-cyrillic", "cp874",
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
    "gbk", "gb2312", "gb18030", "big5", "big5hkscs", "euc_jp", "iso2022_jp", "shift_jis",
    "euc_kr",
)  # fmt: skip
_ALLOWED: Final = frozenset(codecs.lookup(name).name for name in _WHATWG)
_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_PRESCAN: Final = 1024
_META: Final = re.compile(rb"<meta[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]{1,40})", re.I)


def text_codec(label: str | None) -> str | None:
    """The Python codec for a charset label, when it is an allowed text encoding."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip()).name
    except (LookupError, ValueError):
        return None
    return name if name in _ALLOWED else None


def _bom(body: bytes) -> str | None:
    return next((codec for bom, codec in _BOMS if body.startswith(bom)), None)


def html_codec(body: bytes, declared: str | None) -> str:
    """The codec of an HTML body: its BOM, the header charset, `<meta charset>`, else UTF-8."""
    found = _bom(body) or text_codec(declared)
    if found is None:
        meta = _META.search(body[:_PRESCAN])
        found = text_codec(meta.group(1).decode("ascii")) if meta else None
        # A `<meta>` readable as ASCII cannot be UTF-16 (WHATWG: such a label means UTF-8).
        found = None if found is not None and found.startswith("utf-16") else found
    return found or "utf-8"


def decode_text(body: bytes, declared: str | None) -> str:
    """A non-HTML body as text: its BOM, the header charset, else UTF-8; bad bytes are U+FFFD."""
    return body.decode(_bom(body) or text_codec(declared) or "utf-8", errors="replace")
