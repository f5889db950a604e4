"""Inline Markdown images (`![alt](destination "title")`) and where they sit in a text.

Only inline images count: reference-style images, escaped `\\![…]`, and images inside inline
code spans stay literal. The alt text may hold balanced or escaped brackets; a bare destination
may hold balanced parentheses (`https://e.com/a_(1).png`); `<…>` destinations and `"…"`, `'…'`
or `(…)` titles are understood. The scan is linear in the line length.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from typing import Final

from .._lazy import value_class
from ._regions import CodeIndex

__all__ = ["ImageSpan", "find_image_spans"]

_WS: Final = " \t"
# CommonMark decodes a destination: backslash escapes of ASCII punctuation and entity references
# (which need their `;`). `![x](https://a.example\\@127.0.0.1/)` names `…a.example@127.0.0.1/`.
_DESTINATION_ESCAPE: Final = re.compile(
    r"\\([!-/:-@\[-`{-~])|&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});"
)


def _decode_destination(raw: str) -> str:
    if "\\" not in raw and "&" not in raw:
        return raw
    return _DESTINATION_ESCAPE.sub(lambda m: m.group(1) or html.unescape(m.group()), raw)


@value_class
class ImageSpan:
    """One inline image: `[start, end)` of its source and its destination text."""

    start: int
    end: int
    destination: str


class _Line:
    """Bracket and parenthesis structure of one line, computed once (linear time).

    Scanning for the `]` that closes each `![` and the `)` that ends each destination from
    scratch is quadratic when a line repeats `![` or `![a](` (issue 17). Backslash escapes are
    tokenised once from the line start; every scan the parser starts (after `[` or `(`) begins
    on a token boundary, so the shared tokenisation gives the same answers.
    """

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text = text
        self.start = start
        self.end = end
        self.brackets: dict[int, int] = {}
        opened: list[int] = []
        # Paren balance before each position, the next position whose balance is lower, and
        # the next unescaped whitespace or control character (where a bare destination stops).
        self.balance: list[int] = [0] * (end - start + 1)
        self.stop: list[int] = [end] * (end - start + 1)
        stops: list[int] = []
        depth = 0
        index = start
        while index < end:
            char = text[index]
            self.balance[index - start] = depth
            if char == "\\":
                if index + 1 < end:
                    self.balance[index + 1 - start] = depth
                index += 2
                continue
            if char == "[":
                opened.append(index)
            elif char == "]" and opened:
                self.brackets[opened.pop()] = index
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif char in _WS or ord(char) < 0x20:
                stops.append(index)
            index += 1
        self.balance[min(index, end) - start] = depth
        self._stops = stops
        self._lower: list[int] | None = None

    def closing_bracket(self, opening: int) -> int:
        """The `]` that closes the `[` at `opening`, or -1."""
        return self.brackets.get(opening, -1)

    def paren_close(self, index: int) -> int:
        """The first `)` after `index` at depth 0 relative to `index`, or `end`."""
        if self._lower is None:
            self._lower = _next_lower(self.balance)
        return self.start + self._lower[index - self.start] - 1

    def next_stop(self, index: int) -> int:
        """The first unescaped whitespace or control character at or after `index`."""
        position = bisect_left(self._stops, index)
        return self._stops[position] if position < len(self._stops) else self.end


def _next_lower(values: list[int]) -> list[int]:
    """For each index, the first later index holding a smaller value (`len` if none)."""
    result = [len(values)] * len(values)
    pending: list[int] = []
    for index, value in enumerate(values):
        while pending and values[pending[-1]] > value:
            result[pending.pop()] = index
        pending.append(index)
    return result


def _skip_ws(text: str, index: int, end: int) -> int:
    while index < end and text[index] in _WS:
        index += 1
    return index


def _title_end(text: str, index: int, end: int) -> int:
    """Index just past `)` after an optional title starting at `index`, or -1."""
    index = _skip_ws(text, index, end)
    if index < end and text[index] == ")":
        return index + 1
    if index >= end or text[index] not in "\"'(":
        return -1
    closer = ")" if text[index] == "(" else text[index]
    index += 1
    while index < end and text[index] != closer:
        if text[index] == "(" and closer == ")":
            return -1
        index += 2 if text[index] == "\\" else 1
    if index >= end:
        return -1
    index = _skip_ws(text, index + 1, end)
    return index + 1 if index < end and text[index] == ")" else -1


def _destination(line: _Line, index: int) -> tuple[str, int] | None:
    text, end = line.text, line.end
    index = _skip_ws(text, index, end)
    if index < end and text[index] == "<":
        close = index + 1
        while close < end and text[close] not in "<>":
            close += 2 if text[close] == "\\" else 1
        if close >= end or text[close] != ">":
            return None
        after = _title_end(text, close + 1, end)
        return None if after < 0 else (_decode_destination(text[index + 1 : close]), after)
    stop = line.next_stop(index)
    close = line.paren_close(index)
    if close < stop:
        after = _title_end(text, close, end)
        return None if after < 0 else (_decode_destination(text[index:close]), after)
    if line.balance[stop - line.start] != line.balance[index - line.start]:
        return None  # an unclosed `(` in the destination
    after = _title_end(text, stop, end)
    return None if after < 0 else (_decode_destination(text[index:stop]), after)


def _escaped(text: str, index: int, floor: int) -> bool:
    count = 0
    while index - count - 1 >= floor and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def find_image_spans(
    text: str, start: int, end: int, code_spans: CodeIndex, limit: int
) -> list[ImageSpan]:
    """Inline images inside `text[start:end]` (one line), at most `limit`, skipping code spans."""
    spans: list[ImageSpan] = []
    line = _Line(text, start, end)
    index = text.find("![", start, end)
    while index >= 0 and len(spans) < limit:
        found = None
        in_code = code_spans.covers(index)
        if not in_code and not _escaped(text, index, start):
            label_end = line.closing_bracket(index + 1)
            if label_end >= 0 and label_end + 1 < end and text[label_end + 1] == "(":
                found = _destination(line, label_end + 2)
        if found is None:
            index = text.find("![", index + 2, end)
            continue
        destination, after = found
        spans.append(ImageSpan(start=index, end=after, destination=destination))
        index = text.find("![", after, end)
    return spans
