"""Splitting media attachments out of reply text: `MEDIA:` lines and promoted Markdown images.

A `MEDIA:` directive is a whole line whose trimmed text starts with `MEDIA:` (any case), outside
fenced and indented code. Its payload is one or more references: a quoted value is one reference
with spaces allowed; otherwise the payload splits on whitespace and re-joins the fragments of a
spaced path. Each reference is validated (`_paths.is_valid_media`); a rejected remote URL stays
visible text, a rejected *local* path (traversal, `~user`) is removed silently so it never leaks.
Markdown images stay text unless the caller opts in (`extract_markdown_images`) or lists exact
targets in `markdown_image_allowlist`; only public `https:` images are promoted.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import Final, NotRequired, TypedDict

from ._directives import AUDIO_TAG
from ._fences import find_code_blocks, find_code_spans
from ._images import ImageSpan, find_image_spans
from ._paths import (
    clean_candidate,
    has_traversal_or_unsupported_home_dir_prefix,
    looks_like_local_file_path,
    media_reference,
    normalize_media_source,
    split_unquoted_media_directive_parts,
    unwrap_quoted,
)
from ._regions import CodeIndex
from ._segments import MediaSegment, SegmentBuilder
from ._tags import parse_inline_directives
from ._text import (
    JS_LINE_SPACE_CLASS,
    JS_SPACE,
    JS_SPACE_CLASS,
    js_trim,
    js_trim_end,
    js_trim_start,
    require_str,
    utf16_len,
)

__all__ = ["MediaSegment", "SplitMedia", "split_media_from_output"]


class SplitMedia(TypedDict):
    """Result of `split_media_from_output` (protocol keys; absent keys mean "none")."""

    text: str
    mediaUrls: NotRequired[list[str]]
    segments: NotRequired[list[MediaSegment]]
    audioAsVoice: NotRequired[bool]


_SPACE_SET: Final = frozenset(JS_SPACE)
# A payload that is one token `clean_candidate` leaves unchanged (no wrapper, quote or comma).
_PLAIN_PAYLOAD: Final = re.compile(f"[^{JS_SPACE_CLASS}`\"'\\[{{(\\\\}})\\],]+")
_MEDIA_HINT: Final = re.compile("media:", re.IGNORECASE | re.ASCII)
_LINE_SPACE: Final = f"[{JS_LINE_SPACE_CLASS}]"
# `js_trim_start(line)[:6].upper()` starts with `MEDIA:` exactly when the line starts like this
# (`ı` upper-cases to `I`; no other character upper-cases to a string starting with these).
_MEDIA_START: Final = "[mM][eE][dD][iIı][aA]:"
_MEDIA_LINE: Final = re.compile(f"\n{_LINE_SPACE}*{_MEDIA_START}")
_MEDIA_LINE_AT_START: Final = re.compile(f"{_LINE_SPACE}*{_MEDIA_START}")
_MEDIA_TOKEN: Final = re.compile(
    f"\\bMEDIA:[{JS_SPACE_CLASS}]*`?([^\\n]+)`?", re.IGNORECASE | re.ASCII
)
_SPACE: Final = re.compile(f"[{JS_SPACE_CLASS}]")
_WIDE_GAP: Final = re.compile(r"[ \t]{2,}")
_LEADING_BLANK_LINES: Final = re.compile(r"\A(?:[ \t]*\n)+")
_HTTP_PREFIX: Final = re.compile(r"https?://", re.IGNORECASE)
_FILE_PREFIX: Final = re.compile(r"file:(?://)?", re.IGNORECASE)
MAX_IMAGE_LINE_LENGTH: Final = 20_000
MAX_IMAGES_PER_LINE: Final = 50


def _clean_line(text: str) -> str:
    return js_trim(_WIDE_GAP.sub(" ", text))


class _Splitter:
    """Mutable state of one split: accepted media, ordered segments, kept visible lines."""

    def __init__(self, allowlist: dict[str, str] | None, preserve: bool) -> None:
        self.allowlist = allowlist
        self.preserve = preserve
        self.media: list[str] = []
        self.segments = SegmentBuilder()
        self.kept: list[str] = []
        self.found = False

    def push_all(self, pieces: list[MediaSegment]) -> None:
        for piece in pieces:
            if piece["type"] == "text":
                self.segments.push_line(piece.get("text", ""))
            else:
                self.segments.push_media(piece)

    def keep(self, line: str) -> None:
        self.kept.append(line)
        self.segments.push_line(line)

    def keep_lines(self, lines: str) -> None:
        """`keep` for each line of `lines` (one or more lines joined by line feeds), at once."""
        self.kept.append(lines)
        self.segments.push_lines(lines)

    def media_line(self, line: str, match: re.Match[str]) -> None:
        start = len(self.media)
        accepted, invalid, hides = _read_payload(match.group(1), self.media)
        pieces = [line[: match.start()]]
        out: list[MediaSegment] = []
        if accepted:
            self.found = True
            before = _clean_line("".join(pieces))
            if before:
                out.append({"type": "text", "text": before})
            pieces = [" ".join(invalid)] if invalid else []
            out.extend({"type": "media", "url": url} for url in self.media[start:])
        elif hides:
            self.found = True
        else:
            pieces.append(match.group(0))
        pieces.append(line[match.end() :])
        cleaned = _clean_line("".join(pieces))
        if cleaned:
            self.kept.append(cleaned)
            out.append({"type": "text", "text": cleaned})
        self.push_all(out)

    def image_line(self, line: str, spans: list[ImageSpan]) -> bool:
        out: list[MediaSegment] = []
        segment_pieces: list[str] = []
        visible: list[str] = []
        lifted: list[ImageSpan] = []
        cursor = 0
        for span in spans:
            before = line[cursor : span.start]
            segment_pieces.append(before)
            visible.append(before)
            target = self._image_target(span)
            if target is None:
                original = line[span.start : span.end]
                segment_pieces.append(original)
                visible.append(original)
            else:
                lifted.append(span)
                self._push_caption(out, "".join(segment_pieces))
                segment_pieces = []
                self.media.append(target)
                out.append({"type": "media", "url": target})
            cursor = span.end
        if not lifted:
            return False
        segment_pieces.append(line[cursor:])
        visible.append(line[cursor:])
        self._push_caption(out, "".join(segment_pieces))
        cleaned = _remove_spans(line, lifted) if self.preserve else _clean_line("".join(visible))
        if cleaned or self.preserve:
            self.kept.append(cleaned)
        self.found = True
        self.push_all(out)
        return True

    def _push_caption(self, out: list[MediaSegment], text: str) -> None:
        caption = text if self.preserve else _clean_line(text)
        if js_trim(caption):
            out.append({"type": "text", "text": caption})

    def _image_target(self, span: ImageSpan) -> str | None:
        target = normalize_media_source(js_trim(span.destination))
        if self.allowlist is not None:
            return self.allowlist.get(target) or None
        return media_reference(target) if _HTTP_PREFIX.match(target) else None


def _read_payload(payload: str, media: list[str]) -> tuple[bool, list[str], bool]:
    """Validate one directive payload into `media`: (accepted any, invalid parts, hide it)."""
    plain = payload.strip(JS_SPACE)
    if _PLAIN_PAYLOAD.fullmatch(plain):
        # One token with no quote, wrapper or comma to clean: the general path below would
        # validate exactly this candidate first and stop there when it is accepted.
        reference = media_reference(plain)
        if reference is not None:
            media.append(reference)
            return True, [], looks_like_local_file_path(plain) or bool(_FILE_PREFIX.match(plain))
    unwrapped = unwrap_quoted(payload)
    value = payload if unwrapped is None else unwrapped
    parts = [unwrapped] if unwrapped else split_unquoted_media_directive_parts(payload)
    start = len(media)
    invalid: list[str] = []
    for part in parts:
        quoted = unwrap_quoted(part) if unwrapped is None else None
        candidate = unwrapped if unwrapped is not None else quoted
        spaced = bool(candidate)
        candidate = clean_candidate(part) if candidate is None else candidate
        reference = media_reference(
            candidate, allow_spaces=spaced or bool(_SPACE.search(candidate))
        )
        if reference is not None:
            media.append(reference)
        elif not _SPACE.search(part) or not has_traversal_or_unsupported_home_dir_prefix(candidate):
            invalid.append(part)
    trimmed = js_trim(value)
    hides = looks_like_local_file_path(trimmed) or _FILE_PREFIX.match(trimmed) is not None
    if (
        not unwrapped
        and len(media) - start == 1
        and invalid
        and not any(_starts_new_reference(part) for part in parts[1:])
        and _SPACE.search(value)
        and hides
    ):
        welded = clean_candidate(value)
        reference = media_reference(welded, allow_spaces=True)
        if reference is not None:
            media[start:] = [reference]
            invalid = []
    if len(media) == start:
        fallback = clean_candidate(value) if unwrapped is None else unwrapped
        reference = media_reference(fallback, allow_spaces=True, allow_bare_filename=True)
        if reference is not None:
            media.append(reference)
            invalid = []
    return len(media) > start, invalid, hides


def _starts_new_reference(part: str) -> bool:
    candidate = _FILE_PREFIX.sub("", clean_candidate(part), count=1)
    return bool(
        re.match(r"(?:[a-zA-Z]:[\\/]|[/~]|\.{1,2}[\\/]|\\\\|[a-zA-Z][a-zA-Z0-9+.-]*:)", candidate)
    )


def _remove_spans(line: str, spans: list[ImageSpan]) -> str:
    """Remove lifted images from a line, keeping one gap where text sits on both sides."""
    pieces: list[str] = []
    cursor = 0
    for span in spans:
        left, right = span.start, span.end
        while left > cursor and line[left - 1] in " \t":
            left -= 1
        while right < len(line) and line[right] in " \t":
            right += 1
        text_before = left > 0 and line[left - 1] != "\r"
        text_after = right < len(line) and line[right] != "\r"
        start, end, gap = span.start, span.end, ""
        if text_before:
            start = left
            if text_after:
                gap = line[span.end : right] or line[left : span.start]
                end = right
        elif text_after:
            end = right
        pieces.append(line[cursor:start] + gap)
        cursor = end
    pieces.append(line[cursor:])
    return "".join(pieces)


def split_media_from_output(
    raw: str,
    *,
    extract_markdown_images: bool = False,
    markdown_image_allowlist: Sequence[str] | None = None,
    extract_media_directives: bool = True,
    extract_audio_directives: bool = True,
    preserve_trailing_whitespace: bool = False,
) -> SplitMedia:
    """Split reply text into visible text, media references and ordered segments.

    Args:
        raw: The reply or tool output text.
        extract_markdown_images: Promote public `https:` Markdown images to media.
        markdown_image_allowlist: Exact image targets to promote (implies image extraction;
            an empty list promotes nothing).
        extract_media_directives: `False` leaves `MEDIA:` lines as ordinary text.
        extract_audio_directives: `False` leaves `[[audio_as_voice]]` in the text.
        preserve_trailing_whitespace: Keep trailing whitespace of the text.

    Returns:
        `{text, mediaUrls?, segments?, audioAsVoice?}`; `segments` is absent on the fast path
        (nothing that could be a directive).

    Raises:
        TypeError: `raw` is not a string.
    """
    source = require_str(raw, "raw")
    text = source if preserve_trailing_whitespace else source.rstrip(JS_SPACE)
    if not text or (text[0] in _SPACE_SET and not text.strip(JS_SPACE)):
        return {"text": text if preserve_trailing_whitespace else ""}
    images = markdown_image_allowlist is not None or extract_markdown_images is True
    may_media = (
        extract_media_directives is not False
        and ":" in text
        and _MEDIA_HINT.search(text) is not None
    )
    may_image = images and "![" in text
    if not may_media and not may_image:
        if "[[" not in text:
            return {"text": text}
        if extract_audio_directives is False or AUDIO_TAG.search(text) is None:
            # No line can change and no audio tag can be removed: the full pass would return
            # the text unchanged, now as one segment.
            return {"text": text, "segments": [{"type": "text", "text": text}]}
    allowlist = None
    if markdown_image_allowlist is not None:
        allowlist = {
            normalize_media_source(js_trim(require_str(entry, "markdown_image_allowlist[]"))): entry
            for entry in markdown_image_allowlist
        }
    splitter = _Splitter(allowlist, preserve_trailing_whitespace)
    _split_lines(splitter, text, images=images, media=extract_media_directives is not False)
    return _finish(splitter, text, extract_audio_directives is not False)


def _candidate_lines(text: str, *, images: bool, media: bool) -> list[int]:
    """Starts of the lines that may be `MEDIA:` lines or hold images, in order.

    A superset: each candidate is still checked exactly; every other line is plain text.
    """
    starts: list[int] = []
    if media:
        if _MEDIA_LINE_AT_START.match(text):
            starts.append(0)
        starts.extend(match.start() + 1 for match in _MEDIA_LINE.finditer(text))
    if images:
        hit = text.find("![")
        while hit >= 0:
            starts.append(text.rfind("\n", 0, hit) + 1)
            end = text.find("\n", hit)
            hit = -1 if end < 0 else text.find("![", end)
        starts = sorted(set(starts))
    return starts


def _split_lines(splitter: _Splitter, text: str, *, images: bool, media: bool) -> None:
    blocks = find_code_blocks(text)
    block_ends = [block.end for block in blocks]
    spans: CodeIndex | None = None
    cursor = 0
    for offset in _candidate_lines(text, images=images, media=media):
        if offset > cursor:
            splitter.keep_lines(text[cursor : offset - 1])
        line_end = text.find("\n", offset)
        line_end = len(text) if line_end < 0 else line_end
        line = text[offset:line_end]
        cursor = line_end + 1
        block = bisect_right(block_ends, offset)
        if block < len(blocks) and line_end > blocks[block].start:
            splitter.keep(line)
        elif media and js_trim_start(line)[:6].upper().startswith("MEDIA:"):
            match = _MEDIA_TOKEN.search(line)
            if match is None:
                splitter.keep(line)
            else:
                splitter.media_line(line, match)
        elif images and "![" in line and utf16_len(line) <= MAX_IMAGE_LINE_LENGTH:
            spans = CodeIndex(find_code_spans(text, blocks)) if spans is None else spans
            found = find_image_spans(text, offset, line_end, spans, MAX_IMAGES_PER_LINE)
            shifted = [
                ImageSpan(start=s.start - offset, end=s.end - offset, destination=s.destination)
                for s in found
            ]
            if not splitter.image_line(line, shifted):
                splitter.keep(line)
        else:
            splitter.keep(line)
    if cursor <= len(text):
        splitter.keep_lines(text[cursor:])


def _finish(splitter: _Splitter, text: str, audio: bool) -> SplitMedia:
    visible = _LEADING_BLANK_LINES.sub("", "\n".join(splitter.kept), count=1)
    voice = False
    if audio:
        parsed = parse_inline_directives(
            visible,
            strip_reply_tags=False,
            preserve_trailing_whitespace=splitter.preserve,
        )
        visible, voice = parsed["text"], parsed["audioAsVoice"]
    cleaned = visible if splitter.preserve else js_trim_end(visible)
    result: SplitMedia
    if not splitter.media:
        final = cleaned if splitter.found or voice else text
        result = {"text": final, "segments": [{"type": "text", "text": final}] if final else []}
    else:
        segments = splitter.segments.build() or [{"type": "text", "text": cleaned}]
        result = {"text": cleaned, "mediaUrls": list(splitter.media), "segments": segments}
    if voice:
        result["audioAsVoice"] = True
    return result
