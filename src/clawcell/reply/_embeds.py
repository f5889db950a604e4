"""`[embed …]` shortcodes: Control-UI canvases named in reply text.

Threat model: the shortcode's attributes come from model output and end up in an `<iframe>` the
Control UI renders. An attacker wants script execution in the UI origin (`javascript:` or
`vbscript:` URLs, script-bearing `data:` URLs, entity-obfuscated variants such as
`&#106;avascript:`), or event-handler attributes (`onload=`). This module therefore drops `on*`
attributes, drops dangerous URL-like values (checked after decoding the entities attackers use
and removing whitespace), ignores attribute strings over 10,240 characters, and — a deliberate
divergence from the recorded 2026.9.6 bundle, which rendered them — leaves an embed whose `url`
or `ref` was dangerous as plain text with no preview. Only URL-backed embeds render; block
bodies (inline HTML) are discarded, never rendered. Shortcodes inside code are literal.

Limits: the iframe source is further confined by `resolve_canvas_iframe_url` (same-origin
canvas paths only unless external embeds are explicitly allowed) and its sandbox tier by
`resolve_embed_sandbox`; this module does not fetch or render anything.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Final, TypedDict

from ._canvas import CanvasPreview, normalize_preferred_height
from ._fences import CodeIndex, regions_of
from ._text import JS_SPACE_CLASS, js_number, js_trim, require_str, utf16_len

__all__ = [
    "EmbedExtraction",
    "default_canvas_entry_url",
    "extract_canvas_shortcodes",
    "parse_canvas_attributes",
    "preview_from_shortcode",
]

_S = f"[{JS_SPACE_CLASS}]"
_BLOCK: Final = re.compile(f"\\[embed{_S}+([^\\]]*?[^\\]/]|)\\]([\\s\\S]*?)\\[/embed\\]", re.I)
_SELF_CLOSING: Final = re.compile(f"\\[embed{_S}+([^\\]]*?)/\\]", re.I)
_ATTRIBUTE: Final = re.compile(f"([A-Za-z_][A-Za-z0-9_-]*){_S}*={_S}*(?:\"([^\"]*)\"|'([^']*)')")
_EVENT_HANDLER: Final = re.compile(r"on[a-z]+", re.I)
_ENTITY: Final = re.compile(
    r"&#(?:106|97|118|115|99|114|105|112|116|58|38|60|62);|&(?:quot|apos|lt|gt|amp);", re.I
)
_ENTITY_CHARS: Final = {
    "&#106;": "j", "&#97;": "a", "&#118;": "v", "&#115;": "s", "&#99;": "c", "&#114;": "r",
    "&#105;": "i", "&#112;": "p", "&#116;": "t", "&#58;": ":", "&#38;": "&", "&#60;": "<",
    "&#62;": ">", "&quot;": '"', "&apos;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&",
}  # fmt: skip
_WHITESPACE: Final = re.compile(f"{_S}+")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
MAX_ATTRIBUTES_LENGTH: Final = 10_240
CANVAS_DOCUMENTS_PATH: Final = "/__openclaw__/canvas/documents/"
_URI_COMPONENT_SAFE: Final = "-_.!~*'()"


class EmbedExtraction(TypedDict):
    """Result of `extract_canvas_shortcodes`: the stripped text and the previews, in order."""

    text: str
    previews: list[CanvasPreview]


def _is_dangerous(value: str) -> bool:
    decoded = _ENTITY.sub(lambda m: _ENTITY_CHARS[m.group().lower()], value)
    compact = _WHITESPACE.sub("", decoded.lower())
    if compact.startswith(("javascript:", "vbscript:")):
        return True
    if not compact.startswith("data:") or compact.startswith("data:image/"):
        return False
    return compact.startswith(("data:text/html", "data:application/")) or "script" in compact


def _scan_attributes(raw: str) -> tuple[dict[str, str], set[str]]:
    """Parse attributes; returns the kept ones and the keys dropped as dangerous."""
    attrs: dict[str, str] = {}
    rejected: set[str] = set()
    if not js_trim(raw) or utf16_len(raw) > MAX_ATTRIBUTES_LENGTH:
        return attrs, rejected
    for match in _ATTRIBUTE.finditer(raw):
        key = match.group(1).lower()
        value = js_trim(match.group(2) if match.group(2) is not None else match.group(3))
        if _EVENT_HANDLER.fullmatch(key) or not value:
            continue
        if _is_dangerous(value):
            rejected.add(key)
            attrs.pop(key, None)
            continue
        rejected.discard(key)
        attrs[key] = value
    return attrs, rejected


def parse_canvas_attributes(raw: str) -> dict[str, str]:
    """Parse `key="value"` / `key='value'` shortcode attributes, dropping dangerous ones.

    Keys are lower-cased, values trimmed, empty values and unquoted values ignored, the last
    duplicate wins; `on*` handlers and `javascript:`/`vbscript:`/script-bearing `data:` values
    are dropped; more than 10,240 characters of attributes give `{}`.
    """
    return _scan_attributes(require_str(raw, "raw"))[0]


def default_canvas_entry_url(ref: str) -> str:
    """`/__openclaw__/canvas/documents/<encodeURIComponent(ref)>/index.html`."""
    value = _LONE_SURROGATE.sub("\ufffd", js_trim(require_str(ref, "ref")))
    encoded = urllib.parse.quote(value, safe=_URI_COMPONENT_SAFE)
    return f"{CANVAS_DOCUMENTS_PATH}{encoded}/index.html"


def preview_from_shortcode(attrs: Mapping[str, str]) -> CanvasPreview | None:
    """The canvas preview a shortcode's attributes describe, or `None` (no `url`/`ref`)."""
    target = attrs.get("target")
    if target and target != "assistant_message":
        return None
    url = js_trim(attrs.get("url") or "")
    ref = js_trim(attrs.get("ref") or "")
    if not url and not ref:
        return None
    preview: CanvasPreview = {
        "kind": "canvas",
        "surface": "assistant_message",
        "render": "url",
        "url": url or default_canvas_entry_url(ref),
    }
    if ref:
        preview["viewId"] = ref
    title = js_trim(attrs.get("title") or "")
    if title:
        preview["title"] = title
    height = attrs.get("height")
    if height:
        preferred = normalize_preferred_height(js_number(height))
        if preferred is not None:
            preview["preferredHeight"] = preferred
    class_name = js_trim(attrs.get("class") or "") or js_trim(attrs.get("class_name") or "")
    if class_name:
        preview["className"] = class_name
    style = js_trim(attrs.get("style") or "")
    if style:
        preview["style"] = style
    return preview


def _matches(text: str) -> list[tuple[int, int, str]]:
    code = CodeIndex(regions_of(text))
    found: list[tuple[int, int, int, str]] = []
    for order, pattern in enumerate((_BLOCK, _SELF_CLOSING)):
        for match in pattern.finditer(text):
            if not code.covers(match.start()):
                found.append((match.start(), order, match.end(), match.group(1)))
    found.sort(key=lambda item: (item[0], item[1]))
    return [(start, end, attrs) for start, _, end, attrs in found]


def extract_canvas_shortcodes(text: str | None) -> EmbedExtraction:
    """Remove `[embed …]` shortcodes outside code and return `{text, previews}`.

    A shortcode that yields no preview (no `url`/`ref`, a foreign `target`, a dangerous URL)
    stays in the text verbatim; overlapping or nested shortcodes after the first are ignored.
    """
    source = "" if text is None else require_str(text, "text")
    if not js_trim(source) or "[embed" not in source.lower():
        return {"text": source, "previews": []}
    previews: list[CanvasPreview] = []
    pieces: list[str] = []
    cursor = 0
    for start, end, raw in _matches(source):
        if start < cursor:
            continue
        pieces.append(source[cursor:start])
        attrs, rejected = _scan_attributes(raw)
        preview = None if rejected & {"url", "ref"} else preview_from_shortcode(attrs)
        if preview is None:
            pieces.append(source[start:end])
        else:
            previews.append(preview)
        cursor = end
    pieces.append(source[cursor:])
    return {"text": "".join(pieces), "previews": previews}
