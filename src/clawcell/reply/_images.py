"""Inline Markdown images (`![alt](destination "title")`) and where they sit in a text.

Only inline images count: reference-style images, escaped `\\![…]`, and images inside inline
code spans stay literal. The alt text may hold balanced or escaped brackets; a bare destination
may hold balanced parentheses (`https://e.com/a_(1).png`); `<…>` destinations and `"…"`, `'…'`
or `(…)` titles are understood. The scan is linear in the line length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._fences import CodeIndex

__all__ = ["ImageSpan", "find_image_spans"]

_WS: Final = " \t"


@dataclass(frozen=True, kw_only=True)
class ImageSpan:
    """One inline image: `[start, end)` of its source and its destination text."""

    start: int
    end: int
    destination: str


def _closing_bracket(text: str, index: int, end: int) -> int:
    depth = 1
    while index < end:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


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


def _destination(text: str, index: int, end: int) -> tuple[str, int] | None:
    index = _skip_ws(text, index, end)
    if index < end and text[index] == "<":
        close = index + 1
        while close < end and text[close] not in "<>":
            close += 2 if text[close] == "\\" else 1
        if close >= end or text[close] != ">":
            return None
        after = _title_end(text, close + 1, end)
        return None if after < 0 else (text[index + 1 : close], after)
    start, depth = index, 0
    while index < end:
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char in _WS or ord(char) < 0x20:
            break
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        index += 1
    if depth:
        return None
    after = _title_end(text, min(index, end), end)
    return None if after < 0 else (text[start : min(index, end)], after)


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
    index = text.find("![", start, end)
    while index >= 0 and len(spans) < limit:
        found = None
        in_code = code_spans.covers(index)
        if not in_code and not _escaped(text, index, start):
            label_end = _closing_bracket(text, index + 2, end)
            if label_end >= 0 and label_end + 1 < end and text[label_end + 1] == "(":
                found = _destination(text, label_end + 2, end)
        if found is None:
            index = text.find("![", index + 2, end)
            continue
        destination, after = found
        spans.append(ImageSpan(start=index, end=after, destination=destination))
        index = text.find("![", after, end)
    return spans
