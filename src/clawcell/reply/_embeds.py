"""`[embed …]` shortcodes: Control-UI canvases named in reply text.

Threat model: the shortcode's attributes come from model output and end up in an `<iframe>` the
Control UI renders. An attacker wants script execution in the UI origin (`javascript:` or
`vbscript:` URLs, script-bearing `data:` URLs, obfuscated variants such as `&#x6A;avascript:`,
`&#106avascript:`, `javascript&colon;`, `java&Tab;script:` or a leading control character), or
event-handler attributes (`onload=`). This module therefore drops `on*` attributes and drops
dangerous URL-like values, judged after decoding character references as an HTML parser does
and removing what a URL parser ignores (controls, spaces); and — a deliberate divergence from the
recorded 2026.9.6 bundle, which rendered them — it leaves an embed whose `url` or `ref` was
dangerous as plain text with no preview. Only URL-backed embeds render; block bodies (inline
HTML) are discarded, never rendered. Shortcodes inside code are literal. Every scan is linear in
the text (no attribute length limit is needed; `parse_canvas_attributes` keeps the spec's).

Limits: `title`, `className`, `style` and `viewId` are raw model text by the protocol: every
renderer must escape them (attribute- and HTML-escape; never interpolate `style` into CSS
unchecked). The iframe source is further confined by `resolve_canvas_iframe_url` (same-origin
canvas paths only unless external embeds are explicitly allowed) and its sandbox tier by
`resolve_embed_sandbox`; this module does not fetch or render anything.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from bisect import bisect_left
from collections.abc import Mapping
from typing import Final, TypedDict, cast

from ._canvas import CanvasPreview, normalize_preferred_height
from ._regions import CodeIndex, regions_of
from ._text import JS_SPACE, JS_SPACE_CLASS, js_number, js_trim, require_str, utf16_len

__all__ = [
    "EmbedExtraction",
    "default_canvas_entry_url",
    "extract_canvas_shortcodes",
    "parse_canvas_attributes",
    "preview_from_shortcode",
    "split_canvas_shortcodes",
]

_S = f"[{JS_SPACE_CLASS}]"
_OPENING: Final = re.compile(f"\\[embed{_S}", re.I)
# `[embed` in any case: only the ASCII letters fold to `e`, `m`, `b` and `d` under `re.I`, and a
# pattern that starts with a literal `[` is searched for that character first.
_EMBED_HINT: Final = re.compile(r"\[[eE][mM][bB][eE][dD]")
# The first hint, and when a space follows it, what runs from there to the next `]`.
_FIRST_TAG: Final = re.compile(f"\\[[eE][mM][bB][eE][dD](?:{_S}([^\\]]*)\\])?")
_CLOSE_BRACKET: Final = re.compile(r"\]")
_BLOCK_END: Final = re.compile(r"\[/embed\]", re.I)
# A name starts at the first letter or `_` of a run of name characters: the look-behind and the
# possessive quantifiers keep a long run from being rescanned at every position (linear time).
_ATTRIBUTE: Final = re.compile(
    f"(?<![A-Za-z0-9_-])[0-9-]*+([A-Za-z_][A-Za-z0-9_-]*+){_S}*+={_S}*+(?:\"([^\"]*)\"|'([^']*)')"
)
_EVENT_HANDLER: Final = re.compile(r"on[a-z]+", re.I)
# What a URL parser ignores: C0 controls and spaces (stripped at the ends, tabs and newlines
# removed anywhere) and, conservatively, every other whitespace character.
_URL_IGNORED: Final = re.compile(f"[\\x00-\\x20\\x7f{JS_SPACE_CLASS}]+")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
MAX_ATTRIBUTES_LENGTH: Final = 10_240
CANVAS_DOCUMENTS_PATH: Final = "/__openclaw__/canvas/documents/"
_URI_COMPONENT_SAFE: Final = "-_.!~*'()"
_URI_COMPONENT_PLAIN: Final = re.compile(r"[A-Za-z0-9\-_.!~*'()]*")


class EmbedExtraction(TypedDict):
    """Result of `extract_canvas_shortcodes`: the stripped text and the previews, in order."""

    text: str
    previews: list[CanvasPreview]


def _is_dangerous(value: str) -> bool:
    if ":" not in value and "&" not in value:
        return False  # every dangerous scheme needs a colon, literal or encoded
    # Decode character references the way an HTML parser does for an attribute (numeric ones
    # without `;`, every named reference such as `&colon;` and `&Tab;`), issue 17 R5.
    decoded = html.unescape(value) if "&" in value else value
    compact = _URL_IGNORED.sub("", decoded.lower())
    if compact.startswith(("javascript:", "vbscript:")):
        return True
    if not compact.startswith("data:") or compact.startswith("data:image/"):
        return False
    return compact.startswith(("data:text/html", "data:application/")) or "script" in compact


def _scan_attributes(raw: str, *, limited: bool) -> tuple[dict[str, str], set[str] | None]:
    """Parse attributes; returns the kept ones and the keys dropped as dangerous (if any)."""
    attrs: dict[str, str] = {}
    rejected: set[str] | None = None
    if not raw.strip(JS_SPACE) or (limited and utf16_len(raw) > MAX_ATTRIBUTES_LENGTH):
        return attrs, rejected
    space = JS_SPACE
    for name, double, single in _ATTRIBUTE.findall(raw):
        # findall gives "" for the quote style that did not match; only one style matches.
        value = (double or single).strip(space)
        if not value:
            continue
        key = name.lower()
        if key.startswith("on") and _EVENT_HANDLER.fullmatch(key):
            continue
        if (":" in value or "&" in value) and _is_dangerous(value):
            rejected = {key} if rejected is None else rejected | {key}
            attrs.pop(key, None)
            continue
        if rejected is not None:
            rejected.discard(key)
        attrs[key] = value
    return attrs, rejected


def parse_canvas_attributes(raw: str) -> dict[str, str]:
    """Parse `key="value"` / `key='value'` shortcode attributes, dropping dangerous ones.

    Keys are lower-cased, values trimmed, empty values and unquoted values ignored, the last
    duplicate wins; `on*` handlers and `javascript:`/`vbscript:`/script-bearing `data:` values
    are dropped; more than 10,240 characters of attributes give `{}`.
    """
    return _scan_attributes(require_str(raw, "raw"), limited=True)[0]


def default_canvas_entry_url(ref: str) -> str:
    """`/__openclaw__/canvas/documents/<encodeURIComponent(ref)>/index.html`."""
    value = js_trim(require_str(ref, "ref"))
    if _URI_COMPONENT_PLAIN.fullmatch(value):
        return f"{CANVAS_DOCUMENTS_PATH}{value}/index.html"
    value = _LONE_SURROGATE.sub("\ufffd", value)
    encoded = urllib.parse.quote(value, safe=_URI_COMPONENT_SAFE)
    return f"{CANVAS_DOCUMENTS_PATH}{encoded}/index.html"


def _trimmed(attrs: Mapping[str, str], key: str) -> str:
    value = attrs.get(key)
    return value.strip(JS_SPACE) if value else ""


def preview_from_shortcode(attrs: Mapping[str, str]) -> CanvasPreview | None:
    """The canvas preview a shortcode's attributes describe, or `None` (no `url`/`ref`)."""
    target = attrs.get("target")
    if target and target != "assistant_message":
        return None
    url = _trimmed(attrs, "url")
    ref = _trimmed(attrs, "ref")
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
    title = _trimmed(attrs, "title")
    if title:
        preview["title"] = title
    height = attrs.get("height")
    if height:
        preferred = normalize_preferred_height(js_number(height))
        if preferred is not None:
            preview["preferredHeight"] = preferred
    class_name = _trimmed(attrs, "class") or _trimmed(attrs, "class_name")
    if class_name:
        preview["className"] = class_name
    style = _trimmed(attrs, "style")
    if style:
        preview["style"] = style
    return preview


def _scanned_preview(attrs: dict[str, str]) -> CanvasPreview | None:
    """`preview_from_shortcode` for `_scan_attributes` output (values trimmed, never empty)."""
    target = attrs.get("target")
    if target is not None and target != "assistant_message":
        return None
    url = attrs.get("url")
    ref = attrs.get("ref")
    if url is None:
        if ref is None:
            return None
        plain = _URI_COMPONENT_PLAIN.fullmatch(ref) is not None
        url = f"{CANVAS_DOCUMENTS_PATH}{ref}/index.html" if plain else default_canvas_entry_url(ref)
    preview: CanvasPreview = {
        "kind": "canvas",
        "surface": "assistant_message",
        "render": "url",
        "url": url,
    }
    if ref is not None:
        preview["viewId"] = ref
    _decorate(preview, attrs)
    return preview


def _decorate(preview: CanvasPreview, attrs: dict[str, str]) -> None:
    title = attrs.get("title")
    if title is not None:
        preview["title"] = title
    height = attrs.get("height")
    if height is not None:
        preferred = normalize_preferred_height(js_number(height))
        if preferred is not None:
            preview["preferredHeight"] = preferred
    class_name = attrs.get("class") or attrs.get("class_name")
    if class_name is not None:
        preview["className"] = class_name
    style = attrs.get("style")
    if style is not None:
        preview["style"] = style


def _opening_tags(text: str) -> list[tuple[int, int, str]]:
    """Every `[embed<space>…]` opening: (start, index of its `]`, raw attributes).

    The attributes run to the first `]` (they cannot contain one), so one sorted list of `]`
    positions bounds every opening; nothing rescans the rest of the text (issue 17, R1).
    """
    closers = [m.start() for m in _CLOSE_BRACKET.finditer(text)]
    found: list[tuple[int, int, str]] = []
    previous = -1
    for match in _OPENING.finditer(text):
        index = bisect_left(closers, match.end())
        if index == len(closers):
            break
        # Openings that share a `]` with an earlier one can never match on their own: the
        # earlier one either matched (and covers them) or failed for a reason they share.
        if closers[index] != previous:
            previous = closers[index]
            found.append((match.start(), previous, text[match.end() : previous]))
    return found


def _matches(text: str) -> list[tuple[int, int, str]]:
    """Block (`[embed …]…[/embed]`) and self-closing (`[embed … /]`) shortcodes outside code.

    Equivalent to scanning the text once per shortcode form with a non-overlapping regex
    search, then ordering by start (a block before a self-closing tag at the same start).
    """
    code = CodeIndex(regions_of(text))
    ends = [m.start() for m in _BLOCK_END.finditer(text)]
    found: list[tuple[int, int, int, str]] = []
    block_cursor = closing_cursor = 0
    for start, bracket, raw in _opening_tags(text):
        attrs = raw.lstrip(JS_SPACE)
        if start >= closing_cursor and attrs.endswith("/"):
            closing_cursor = bracket + 1
            if not code.covers(start):
                found.append((start, 1, bracket + 1, attrs[:-1]))
        if start < block_cursor or attrs.endswith("/"):
            continue
        index = bisect_left(ends, bracket + 1)
        if index < len(ends):
            block_cursor = ends[index] + len("[/embed]")
            if not code.covers(start):
                found.append((start, 0, block_cursor, attrs))
    found.sort(key=lambda item: (item[0], item[1]))
    return [(start, end, attrs) for start, _, end, attrs in found]


def _sole_hint_outside_code(text: str, start: int) -> bool:
    """Whether the `[embed` at `start` is the only one and no code can cover it.

    Single-character tests first: they are far cheaper than substring searches. Without a
    backtick, `~~~` or a tab only indented code is possible, and a line that starts with the
    shortcode is not indented, so four spaces elsewhere cannot put it in code.
    """
    if text.find("[", start + 6) >= 0 and _EMBED_HINT.search(text, start + 6) is not None:
        return False
    if "`" in text or "\t" in text or ("~" in text and "~~~" in text):
        return False
    return start == 0 or text[start - 1] == "\n" or "    " not in text


def _split_sole(source: str, hint: re.Match[str]) -> list[str | CanvasPreview]:
    """`split_canvas_shortcodes` when `_sole_hint_outside_code` holds for `hint`.

    The same answer as `_matches` would give for a text with one `[embed` outside code.
    """
    inside = hint.group(1)
    if inside is None:  # no space after `[embed`, or no `]` after it
        return [source]
    attrs = inside.lstrip(JS_SPACE)
    end = hint.end()
    if attrs.endswith("/"):
        attrs = attrs[:-1]
    else:
        block = _BLOCK_END.search(source, end)
        if block is None:
            return [source]
        end = block.end()
    preview = _shortcode_preview(attrs)
    if preview is None:
        return [source]
    return [source[: hint.start()], preview, source[end:]]


def _shortcode_preview(raw: str) -> CanvasPreview | None:
    # The release has no length limit here; the scan is linear, so none is needed.
    attrs, rejected = _scan_attributes(raw, limited=False)
    if rejected is not None and ("url" in rejected or "ref" in rejected):
        return None
    return _scanned_preview(attrs)


def extract_canvas_shortcodes(text: str | None) -> EmbedExtraction:
    """Remove `[embed …]` shortcodes outside code and return `{text, previews}`.

    A shortcode that yields no preview (no `url`/`ref`, a foreign `target`, a dangerous URL)
    stays in the text verbatim; overlapping or nested shortcodes after the first are ignored.
    """
    if type(text) is str and "[" not in text:  # the common short reply: one C-level scan
        return {"text": text, "previews": []}
    pieces = split_canvas_shortcodes(text)
    if len(pieces) == 1:
        return {"text": cast(str, pieces[0]), "previews": []}
    kept = "".join(piece for piece in pieces if isinstance(piece, str))
    return {"text": kept, "previews": [piece for piece in pieces if not isinstance(piece, str)]}


def split_canvas_shortcodes(text: str | None) -> list[str | CanvasPreview]:
    """The text cut where each `[embed …]` shortcode outside code stood that yields a preview:
    text and previews alternately, in order, starting and ending with text (maybe empty).

    `extract_canvas_shortcodes` is the text pieces joined and the previews; a page that draws
    each canvas where its shortcode stood uses this instead.
    """
    if type(text) is str:
        if "[" not in text:
            return [text]
        source = text
    else:
        source = "" if text is None else require_str(text, "text")
    hint = _FIRST_TAG.search(source)
    if hint is None:
        return [source]
    if _sole_hint_outside_code(source, hint.start()):
        return _split_sole(source, hint)
    pieces: list[str | CanvasPreview] = []
    kept: list[str] = []  # the text since the last preview
    cursor = 0
    for start, end, raw in _matches(source):
        if start < cursor:
            continue
        kept.append(source[cursor:start])
        preview = _shortcode_preview(raw)
        if preview is None:
            kept.append(source[start:end])
        else:
            pieces += ["".join(kept), preview]
            kept = []
        cursor = end
    kept.append(source[cursor:])
    return [*pieces, "".join(kept)]
