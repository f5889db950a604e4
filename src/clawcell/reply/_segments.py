"""The ordered segments of a split reply: text pieces and media pieces, built line by line.

Visible lines join the text segment before them with a line feed (a whitespace-only line
contributes an empty line); a blank line after a media piece only makes sure the text segment
before it ends with a line feed. A text segment grows by appending parts that are joined once at
the end, so building stays linear in the length of the reply.
"""

from __future__ import annotations

import re
from typing import Final, Literal, NotRequired, TypedDict

from ._text import JS_LINE_SPACE_CLASS, js_trim

__all__ = ["MediaSegment", "SegmentBuilder"]

_LINE_SPACE: Final = f"[{JS_LINE_SPACE_CLASS}]"
_BLANK_LINE: Final = re.compile(f"\n{_LINE_SPACE}+(?=\n|\\Z)")
_LEADING_BLANK_LINES: Final = re.compile(f"(?:{_LINE_SPACE}*\n)+")


class MediaSegment(TypedDict):
    """One ordered piece of a split reply: a `text` piece or a `media` piece with its `url`."""

    type: Literal["text", "media"]
    text: NotRequired[str]
    url: NotRequired[str]


def _blank_lines_emptied(text: str) -> str:
    """Empty every whitespace-only line that follows a line feed in `text`."""
    return _BLANK_LINE.sub("\n", text) if "\n" in text else text


class SegmentBuilder:
    """Collects segments in order; text segments are lists of parts until `build`."""

    def __init__(self) -> None:
        self._items: list[list[str] | MediaSegment] = []
        self._last_text: list[str] | None = None

    def __bool__(self) -> bool:
        return bool(self._items)

    def push_media(self, segment: MediaSegment) -> None:
        """Append a media segment."""
        self._items.append(segment)

    def push_line(self, line: str) -> None:
        """Append one visible line."""
        last = self._items[-1] if self._items else None
        blank = not js_trim(line)
        if isinstance(last, list):
            last.append("\n" if blank else "\n" + line)
        elif blank:
            if last is not None and self._last_text is not None:
                self._end_last_text_with_newline()
        else:
            self._start_text(line)

    def push_lines(self, lines: str) -> None:
        """`push_line` for each line of `lines` (lines joined by line feeds), in one step."""
        last = self._items[-1] if self._items else None
        if isinstance(last, list):
            last.append(_blank_lines_emptied("\n" + lines))
            return
        leading = _LEADING_BLANK_LINES.match(lines)
        rest = lines if leading is None else lines[leading.end() :]
        blank_rest = not js_trim(rest)
        if leading is not None or blank_rest:
            self.push_line("")  # any number of leading blank lines act like one
        if not blank_rest:
            self._start_text(_blank_lines_emptied(rest))

    def build(self) -> list[MediaSegment]:
        """The segments in protocol shape."""
        return [
            {"type": "text", "text": "".join(item)} if isinstance(item, list) else item
            for item in self._items
        ]

    def _start_text(self, text: str) -> None:
        self._last_text = [text]
        self._items.append(self._last_text)

    def _end_last_text_with_newline(self) -> None:
        parts = self._last_text
        if parts is not None and not parts[-1].endswith("\n"):
            parts.append("\n")
