"""Inline directive tags: `[[audio_as_voice]]`, `[[reply_to_current]]`, `[[reply_to:<id>]]`.

Tags are delivery metadata, read only outside code (fenced, indented and inline code are
literal examples). Matching is case-insensitive and tolerates whitespace inside the brackets
(`[[ Reply_To : abc ]]`); a reply id runs to the first `]`, must be followed by `]]` and may not
span a line feed. Removing a tag between two words leaves one space so words never fuse.
"""

from __future__ import annotations

import re
from typing import Final, Literal, NamedTuple

from ._fences import CodeRegion, find_code_blocks
from ._regions import CodeIndex, regions_of
from ._text import JS_SPACE_CLASS, is_js_space, js_trim, js_trim_end, require_str

__all__ = [
    "AUDIO_TAG",
    "ReplyTag",
    "normalize_directive_whitespace",
    "read_reply_tag",
    "replace_outside_code",
    "sanitize_reply_directive_id",
    "strip_malformed_leading_reply_tag",
    "word_gap",
]

AUDIO_TAG: Final = re.compile(
    f"\\[\\[[{JS_SPACE_CLASS}]*audio_as_voice[{JS_SPACE_CLASS}]*\\]\\]", re.I
)
_REPLY_HEAD: Final = re.compile(
    f"\\[\\[[{JS_SPACE_CLASS}]*(?:(reply_to_current)|reply_to[{JS_SPACE_CLASS}]*:)", re.I
)
# A malformed reply tag opening the text (`[[reply_to:abc] text`, `[[reply_to_current text`):
# the release drops it for delivery. Up to three spaces may precede it (four are indented code).
_MALFORMED_LEADING_REPLY: Final = re.compile(
    f"\\A {{0,3}}\\[\\[[{JS_SPACE_CLASS}]*"
    f"(?:reply_to_current(?![A-Za-z0-9_])(?:[{JS_SPACE_CLASS}]*\\](?!\\]))?"
    f"|reply_to[{JS_SPACE_CLASS}]*:[^\\]\\n]*\\](?!\\]))[{JS_SPACE_CLASS}]*",
    re.I,
)
_UNSAFE_ID_CHARS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\[\]]")
MAX_REPLY_DIRECTIVE_ID_CODE_POINTS: Final = 256

_WORD_GAP: Final = re.compile(f"([^{JS_SPACE_CLASS}])[ \\t]{{2,}}([^{JS_SPACE_CLASS}])")
_LEADING_NEWLINES: Final = re.compile(r"\A\n+")
_LEADING_SPACE: Final = re.compile(f"\\A[ \\t](?=[^{JS_SPACE_CLASS}])")
_TRAILING_LINE_SPACE: Final = re.compile(r"[ \t]+\n")
_BLANK_RUNS: Final = re.compile(r"\n{3,}")
_SENTINEL: Final = "\ue000"

TailMode = Literal["trim", "preserve", "normalize"]


class ReplyTag(NamedTuple):
    """A complete reply tag found at `start`: it ends at `end`; `id` is `None` for current.

    A named tuple rather than a frozen dataclass: one is built per tag on the hot path.
    """

    start: int
    end: int
    id: str | None


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and is_js_space(text[index]):
        index += 1
    return index


def read_reply_tag(text: str, start: int) -> ReplyTag | None:
    """Read a complete `[[reply_to_current]]` or `[[reply_to:<id>]]` tag starting at `start`."""
    head = _REPLY_HEAD.match(text, start)
    if head is None:
        return None
    value_start = _skip_space(text, head.end())
    if head.group(1) is not None:
        if text.startswith("]]", value_start):
            return ReplyTag(start, value_start + 2, None)
        return None
    close = text.find("]", value_start)
    if close < 0 or not text.startswith("]]", close):
        return None
    content_end = close
    while content_end > value_start and is_js_space(text[content_end - 1]):
        content_end -= 1
    if value_start < close and "\n" not in text[value_start:content_end]:
        return ReplyTag(start, close + 2, text[value_start:content_end])
    if value_start == close and any(char != "\n" for char in text[head.end() : close]):
        return ReplyTag(start, close + 2, "")
    return None


def strip_malformed_leading_reply_tag(text: str) -> str:
    """`text` without a malformed reply tag (and the whitespace after it) at its very start."""
    if "[[" not in text[:8]:
        return text
    match = _MALFORMED_LEADING_REPLY.match(text)
    if match is None or read_reply_tag(text, text.index("[[")) is not None:
        return text
    return text[match.end() :]


def word_gap(source: str, start: int, end: int) -> str:
    """`" "` when removing `source[start:end]` would fuse two words, else `""`."""
    if start == 0 or end >= len(source):
        return ""
    return "" if is_js_space(source[start - 1]) or is_js_space(source[end]) else " "


def replace_outside_code(
    text: str,
    tags: list[tuple[int, int, str | None]],
    regions: list[CodeRegion],
) -> list[tuple[int, int, str | None]]:
    """Keep the `(start, end, id)` tags whose start is not inside a code region."""
    if not regions:
        return tags
    index = CodeIndex(regions)
    return [tag for tag in tags if not index.covers(tag[0])]


def find_audio_tags(text: str) -> list[tuple[int, int, str | None]]:
    """Every `[[audio_as_voice]]` occurrence as `(start, end, None)`."""
    return [(m.start(), m.end(), None) for m in AUDIO_TAG.finditer(text)]


def find_reply_tags(text: str) -> list[tuple[int, int, str | None]]:
    """Every complete reply tag as `(start, end, id)`; `id` is `None` for `reply_to_current`."""
    found: list[tuple[int, int, str | None]] = []
    marker = text.find("[[")
    while marker >= 0:
        tag = read_reply_tag(text, marker)
        if tag is None:
            marker = text.find("[[", marker + 1)
            continue
        found.append(tag)
        marker = text.find("[[", tag[1])
    return found


def sanitize_reply_directive_id(raw: str | None) -> str | None:
    """Drop control characters and brackets, trim, and keep at most 256 code points.

    Returns `None` when nothing is left. `None` input gives `None`.
    """
    if raw is None:
        return None
    trimmed = js_trim(require_str(raw, "raw"))
    if not trimmed:
        return None
    if trimmed.isprintable() and "[" not in trimmed and "]" not in trimmed:
        cleaned = trimmed  # no control character (they are not printable) and no bracket
    else:
        cleaned = js_trim(_UNSAFE_ID_CHARS.sub("", trimmed))
    if not cleaned:
        return None
    return _first_code_points(cleaned, MAX_REPLY_DIRECTIVE_ID_CODE_POINTS)


def _first_code_points(text: str, limit: int) -> str:
    """The first `limit` code points, counting a surrogate *pair* (as two chars) once."""
    if len(text) <= limit:
        return text
    count = 0
    index = 0
    while index < len(text) and count < limit:
        is_pair = (
            "\ud800" <= text[index] <= "\udbff"
            and index + 1 < len(text)
            and "\udc00" <= text[index + 1] <= "\udfff"
        )
        index += 2 if is_pair else 1
        count += 1
    return text[:index]


def _tidy(body: str) -> str:
    """The prose whitespace rules; each regex runs only when its trigger is present."""
    if "\r\n" in body:
        body = body.replace("\r\n", "\n")
    tabs = "\t" in body
    if tabs:
        body = _WORD_GAP.sub(r"\1 \2", body)
    elif "  " in body:
        body = _sub_lines(body, "  ", _WORD_GAP, r"\1 \2")
    if body.startswith("\n"):
        body = _LEADING_NEWLINES.sub("", body)
    if body.startswith((" ", "\t")):
        body = _LEADING_SPACE.sub("", body)
    if tabs:
        body = _TRAILING_LINE_SPACE.sub("\n", body)
    elif " \n" in body:
        body = _sub_lines(body, " \n", _TRAILING_LINE_SPACE, "\n")
    if "\n\n\n" in body:
        body = _BLANK_RUNS.sub("\n\n", body)
    return body


def _sub_lines(body: str, needle: str, pattern: re.Pattern[str], replacement: str) -> str:
    """`pattern.sub` applied only to the lines holding `needle` (each with its line feed).

    Valid for patterns whose matches never span a line feed except as their last character,
    and that can only match where `needle` occurs; scanning a long text with a pattern that
    starts with a character class is slow, finding a literal needle is not.
    """
    pieces: list[str] = []
    cursor = 0
    hit = body.find(needle)
    while hit >= 0:
        start = max(body.rfind("\n", cursor, hit) + 1, cursor)
        end = body.find("\n", hit + len(needle) - 1)
        end = len(body) if end < 0 else end + 1
        pieces.append(body[cursor:start])
        pieces.append(pattern.sub(replacement, body[start:end]))
        cursor = end
        hit = body.find(needle, cursor)
    pieces.append(body[cursor:])
    return "".join(pieces)


def _only_leading_space(body: str) -> bool:
    """`body` starts with one space before a word, has no code and no other `_tidy` trigger."""
    if len(body) < 2 or body[0] != " " or is_js_space(body[1]):
        return False
    if "`" in body or "~~~" in body or "    " in body or "\t" in body:
        return False
    return not _has_triggers(body[1:])


def _has_triggers(text: str) -> bool:
    """Whether any prose rule of `_tidy` could change `text`, code included (a superset)."""
    if text.startswith(("\n", " ", "\t")) or "\t" in text or "  " in text:
        return True
    return "\n" in text and (" \n" in text or "\r\n" in text or "\n\n\n" in text)


def _trim_outside_code(text: str, body: str, regions: list[CodeRegion] | None) -> str | None:
    """`text` without its trailing whitespace (`body`), but never cutting into code.

    `None` when a code region lies wholly in the trailing whitespace (a block of JavaScript-only
    whitespace such as `"    \\xa0"`): the whitespace before it is prose, so the caller must
    take the full path. Inline spans end with a backtick, so the blocks alone decide.
    """
    code = find_code_blocks(text) if regions is None else regions
    if not code or code[-1].end <= len(body):
        return body
    return text[: code[-1].end] if code[-1].start < len(body) else None


def normalize_directive_whitespace(
    text: str, tail: TailMode = "trim", regions: list[CodeRegion] | None = None
) -> str:
    """Tidy prose whitespace after tags were removed, leaving every code region untouched."""
    if tail != "trim":
        if not _has_triggers(text):
            return text
    else:
        body = js_trim_end(text)
        if not _has_triggers(body):
            trimmed = body if body is text else _trim_outside_code(text, body, regions)
            if trimmed is not None:
                return trimmed
        if _only_leading_space(body):
            return body[1:]  # the one rule that fires: a tag removed at the start left a space
    code = regions_of(text) if regions is None else regions
    sentinel = _SENTINEL
    while sentinel in text:
        sentinel += _SENTINEL
    blocks: list[str] = []
    pieces: list[str] = []
    cursor = 0
    for region in code:
        pieces.append(text[cursor : region.start])
        pieces.append(f"{sentinel}{len(blocks)}{sentinel}")
        blocks.append(text[region.start : region.end])
        cursor = region.end
    pieces.append(text[cursor:])
    masked = "".join(pieces)
    cut = len(js_trim_end(masked)) if tail == "preserve" else len(masked)
    body = _tidy(masked[:cut])
    body = js_trim_end(body) if tail == "trim" else body + masked[cut:]
    if not blocks:
        return body
    restore = re.compile(f"{sentinel}(\\d+){sentinel}")
    return restore.sub(lambda m: blocks[int(m.group(1))], body)
