"""Parsing and stripping inline directive tags for delivery, display and history."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NotRequired, TypedDict

from ._directives import (
    TailMode,
    find_audio_tags,
    find_reply_tags,
    normalize_directive_whitespace,
    replace_outside_code,
    sanitize_reply_directive_id,
    strip_malformed_leading_reply_tag,
    word_gap,
)
from ._fences import CodeRegion
from ._regions import CodeIndex, regions_of
from ._text import is_js_space, js_trim, js_trim_end, js_trim_start, require_str

__all__ = [
    "InlineDirectives",
    "StripResult",
    "parse_inline_directive_parts",
    "parse_inline_directives",
    "strip_inline_directive_parts_for_delivery",
    "strip_inline_directive_tags_for_delivery",
    "strip_inline_directive_tags_for_display",
]


class InlineDirectives(TypedDict):
    """Result of `parse_inline_directives` (protocol keys)."""

    text: str
    audioAsVoice: bool
    replyToId: NotRequired[str]
    replyToExplicitId: NotRequired[str]
    replyToCurrent: bool
    hasAudioTag: bool
    hasReplyTag: bool


class StripResult(TypedDict):
    """Result of the strip functions: the text and whether anything was removed."""

    text: str
    changed: bool


_Tag = tuple[int, int, str | None]


def _no_directives(text: str) -> InlineDirectives:
    return {
        "text": text,
        "audioAsVoice": False,
        "replyToCurrent": False,
        "hasAudioTag": False,
        "hasReplyTag": False,
    }


def _outside_code(
    text: str, tags: list[_Tag], regions: list[CodeRegion] | None
) -> tuple[list[_Tag], list[CodeRegion] | None]:
    """The tags outside code, and the code regions of `text` if they had to be computed."""
    if not tags:
        return tags, regions
    regions = regions_of(text) if regions is None else regions
    return replace_outside_code(text, tags, regions), regions


def _remove(text: str, tags: list[_Tag], trailing: list[bool]) -> str:
    """Remove `tags` from `text`, keeping word boundaries; notes a removed trailing tag line."""
    if not tags:
        return text
    pieces: list[str] = []
    cursor = 0
    tail = len(js_trim_end(text))
    for start, end, _ in tags:
        pieces.append(text[cursor:start])
        pieces.append(word_gap(text, start, end))
        if end == tail and not trailing[0]:
            line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
            trailing[0] = not text[line_start:start].strip(" \t")
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def parse_inline_directives(
    text: str | None,
    *,
    current_message_id: str | None = None,
    strip_audio_tag: bool = True,
    strip_reply_tags: bool = True,
    preserve_trailing_whitespace: bool = False,
) -> InlineDirectives:
    """Read `[[audio_as_voice]]` and reply tags outside code and return the cleaned text.

    `replyToId` is the last explicit id, else (for `[[reply_to_current]]`) the trimmed
    `current_message_id`. Text without tags is whitespace-normalized the same way.
    """
    if text is None or text == "":
        return _no_directives("")
    source = require_str(text, "text")
    tail: TailMode = "preserve" if preserve_trailing_whitespace else "trim"
    if "[[" not in source:
        return _no_directives(normalize_directive_whitespace(source, tail))
    trailing = [False]
    audio, regions = _outside_code(source, find_audio_tags(source), None)
    after_audio = _remove(source, audio, trailing) if strip_audio_tag else source
    regions = regions if after_audio is source else None
    replies, regions = _outside_code(after_audio, find_reply_tags(after_audio), regions)
    after_reply = _remove(after_audio, replies, trailing) if strip_reply_tags else after_audio
    regions = regions if after_reply is after_audio else None
    if preserve_trailing_whitespace and trailing[0]:
        tail = "normalize"
    if not audio and not replies:
        return _no_directives(source)
    return _directives_result(
        normalize_directive_whitespace(after_reply, tail, regions),
        audio=bool(audio),
        replies=replies,
        current_message_id=current_message_id,
    )


def _directives_result(
    text: str, *, audio: bool, replies: list[_Tag], current_message_id: str | None
) -> InlineDirectives:
    explicit: str | None = None
    saw_current = False
    for _, _, raw_id in replies:
        if raw_id is None:
            saw_current = True
        else:
            explicit = sanitize_reply_directive_id(raw_id) or explicit
    result: InlineDirectives = {
        "text": text,
        "audioAsVoice": audio,
        "replyToCurrent": saw_current,
        "hasAudioTag": audio,
        "hasReplyTag": bool(replies),
    }
    current = js_trim(current_message_id) if current_message_id else ""
    reply_to = explicit or (current if saw_current and current else None)
    if reply_to is not None:
        result["replyToId"] = reply_to
    if explicit is not None:
        result["replyToExplicitId"] = explicit
    return result


def parse_inline_directive_parts(
    parts: Sequence[str],
    *,
    current_message_id: str | None = None,
    strip_audio_tag: bool = True,
    strip_reply_tags: bool = True,
    preserve_trailing_whitespace: bool = False,
) -> list[InlineDirectives]:
    """`parse_inline_directives` for each part of a multi-part message, in order.

    A part without any tag is returned verbatim (the release normalizes whitespace only in the
    parts it edits).
    """
    results: list[InlineDirectives] = []
    for part in parts:
        parsed = parse_inline_directives(
            require_str(part, "parts[]"),
            current_message_id=current_message_id,
            strip_audio_tag=strip_audio_tag,
            strip_reply_tags=strip_reply_tags,
            preserve_trailing_whitespace=preserve_trailing_whitespace,
        )
        tagged = parsed["hasAudioTag"] or parsed["hasReplyTag"]
        results.append(parsed if tagged else _no_directives(part))
    return results


def _until_stable(source: str, once: Callable[[str], str]) -> StripResult:
    """Apply one stripping pass until nothing changes.

    Removing a tag can assemble a new one from its neighbours (`[[[[audio_as_voice]]…`); a
    single pass would leave that tag for a later reader to act on, so passes repeat (at most
    once per `[[` of the input).
    """
    text = source
    for _ in range(source.count("[[") + 1):
        stripped = once(text)
        if stripped == text:
            break
        text = stripped
    return {"text": text, "changed": text != source}


def strip_inline_directive_tags_for_display(text: str | None) -> StripResult:
    """Remove every tag outside code with nothing in its place; whitespace is left as is.

    `None` (JavaScript's `undefined`) gives `{"text": "", "changed": False}`.
    """
    if text is None:
        return {"text": "", "changed": False}
    return _until_stable(require_str(text, "text"), _display_once)


def _display_once(source: str) -> str:
    if "[[" not in source:
        return source
    audio = replace_outside_code(source, find_audio_tags(source), regions_of(source))
    without_audio = _remove_plain(source, audio)
    regions = regions_of(without_audio) if "[[" in without_audio else []
    replies = replace_outside_code(without_audio, find_reply_tags(without_audio), regions)
    return _remove_plain(without_audio, replies)


def _remove_plain(text: str, tags: list[_Tag]) -> str:
    if not tags:
        return text
    pieces: list[str] = []
    cursor = 0
    for start, end, _ in tags:
        pieces.append(text[cursor:start])
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _delivery_edits(text: str) -> list[tuple[int, int, str]]:
    tags = sorted([*find_audio_tags(text), *find_reply_tags(text)])
    code: CodeIndex | None = None
    edits: list[tuple[int, int, str]] = []
    previous_end = 0
    for marker, tag_end, _ in tags:
        if marker < previous_end:
            continue
        start = marker
        while start > previous_end and is_js_space(text[start - 1]):
            start -= 1
        end = tag_end
        while end < len(text) and is_js_space(text[end]):
            end += 1
        previous_end = end
        code = CodeIndex(regions_of(text)) if code is None else code
        if code.covers(marker):
            continue
        padding = any(r.block and marker < r.start <= end for r in code.regions)
        if padding:
            end = start + len(js_trim_end(text[start:end]))
        edits.append((start, end, "" if padding else " "))
    return edits


def _trim_preserving_code(text: str) -> str:
    trimmed = js_trim_end(text)
    body = js_trim_start(trimmed)
    if not body:
        return body
    first = len(trimmed) - len(body)
    line_start = trimmed.rfind("\n", 0, first) + 1
    blocks = regions_of(trimmed[line_start:])
    if blocks and blocks[0].block and blocks[0].start == 0:
        return trimmed[line_start:]
    return body


def strip_inline_directive_tags_for_delivery(text: str) -> StripResult:
    """Remove tags (and the whitespace around them) outside code, then trim the result."""
    return _until_stable(require_str(text, "text"), _delivery_once)


def _delivery_once(source: str) -> str:
    if "[[" not in source:
        return source
    recovered = strip_malformed_leading_reply_tag(source)
    if recovered is not source:
        return _trim_preserving_code(recovered)
    edits = _delivery_edits(source)
    if not edits:
        return source
    pieces: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        pieces.append(source[cursor:start])
        pieces.append(replacement)
        cursor = end
    pieces.append(source[cursor:])
    return _trim_preserving_code("".join(pieces))


def strip_inline_directive_parts_for_delivery(parts: Sequence[str]) -> list[StripResult]:
    """`strip_inline_directive_tags_for_delivery` for each part of a message, in order."""
    return [strip_inline_directive_tags_for_delivery(require_str(p, "parts[]")) for p in parts]
