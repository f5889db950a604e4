"""Code regions of Markdown text: where directives are literal examples, not instructions.

A reply that *talks about* `MEDIA:` lines, `[[reply_to_current]]` or `[embed …]` shortcodes puts
them in code; nothing inside code may ever be extracted. `find_code_regions` returns those
regions in the shape the protocol uses, `{start, end, block}` with UTF-16 offsets:

* fenced code blocks (backtick or tilde fences of three or more, closed by a fence line of the
  same character that is at least as long and carries nothing but whitespace; an unclosed fence
  runs to the end; a backtick fence whose info string holds a backtick is not a fence),
* indented code blocks (four columns past the container's content, never interrupting a
  paragraph: a lazy continuation line stays prose),
* both also inside block quotes and list items,
* inline code spans (a backtick run closed by the next run of the same length).

This is a compact, line-based block scanner following CommonMark's container rules, not a full
Markdown parser: HTML blocks, link reference definitions and setext headings are treated as
paragraphs.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Final

from .._lazy import value_class
from ._text import Utf16Offsets

__all__ = ["CodeRegion", "find_code_blocks", "find_code_spans"]

_BOM: Final = "\ufeff"
_FENCE_OPEN: Final = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_QUOTE: Final = re.compile(r" {0,3}>[ \t]?")
_LIST_ITEM: Final = re.compile(r"( {0,3})([-+*]|[0-9]{1,9}[.)])(?:([ \t]+)|$)")
_THEMATIC: Final = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_BACKTICKS: Final = re.compile("``*")  # a literal first character makes `re` search fast
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\r?(?=\n)")


@value_class
class CodeRegion:
    """A code region: `[start, end)` in Python string indexes, and whether it is a block."""

    start: int
    end: int
    block: bool

    def to_dict(self, offsets: Utf16Offsets | None = None) -> dict[str, object]:
        """The protocol shape `{start, end, block}`; `offsets` converts indexes to UTF-16 units."""
        if offsets is None:
            return {"start": self.start, "end": self.end, "block": self.block}
        return {"start": offsets.at(self.start), "end": offsets.at(self.end), "block": self.block}


@dataclass
class _Container:
    quote: bool
    indent: int = 0


@dataclass
class _Scan:
    containers: list[_Container]
    leaf: str = ""  # "", "paragraph", "fence", "indented"
    fence_char: str = ""
    fence_len: int = 0
    start: int = 0
    end: int = 0


def _indent(line: str, pos: int) -> tuple[int, int]:
    """Columns of leading whitespace at `pos` and where it ends.

    Tabs advance to the next multiple of 4 counted from the line start, so a tab after `> `
    (column 2) is worth 2 columns, not 4.
    """
    start = col = _column(line, pos)
    while pos < len(line) and line[pos] in " \t":
        col = col + 4 - col % 4 if line[pos] == "\t" else col + 1
        pos += 1
    return col - start, pos


def _column(line: str, pos: int) -> int:
    if "\t" not in line[:pos]:
        return pos
    col = 0
    for char in line[:pos]:
        col = col + 4 - col % 4 if char == "\t" else col + 1
    return col


def _skip_columns(line: str, pos: int, columns: int) -> int:
    col = 0
    while col < columns and pos < len(line) and line[pos] in " \t":
        col = col + 4 - col % 4 if line[pos] == "\t" else col + 1
        pos += 1
    return pos


def _match_containers(scan: _Scan, line: str) -> tuple[int, int]:
    """Consume the prefixes of the open containers; returns (matched count, position)."""
    pos = 0
    for matched, container in enumerate(scan.containers):
        if container.quote:
            found = _QUOTE.match(line, pos)
            if found is None:
                return matched, pos
            pos = found.end()
        elif line[pos:].strip(" \t\r"):
            col, _ = _indent(line, pos)
            if col < container.indent:
                return matched, pos
            pos = _skip_columns(line, pos, container.indent)
    return len(scan.containers), pos


def _is_fence_close(scan: _Scan, line: str, pos: int) -> bool:
    found = _FENCE_OPEN.match(line, pos)
    if found is None or found.group(2)[0] != scan.fence_char:
        return False
    return len(found.group(2)) >= scan.fence_len and not found.group(3).strip(" \t\r")


def _open_containers(scan: _Scan, line: str, pos: int) -> int:
    while True:
        quote = _QUOTE.match(line, pos)
        if quote is not None:
            scan.containers.append(_Container(quote=True))
            scan.leaf = ""
            pos = quote.end()
            continue
        item = _LIST_ITEM.match(line, pos)
        if item is None or _THEMATIC.fullmatch(line, pos):
            return pos
        rest = line[item.end() :].strip(" \t\r")
        if scan.leaf == "paragraph" and not rest:
            return pos
        marker_col, _ = _indent(line[:pos] + item.group(1), 0)
        marker_end = marker_col + len(item.group(2))
        spaces, _ = _indent(item.group(3) or "", 0)
        width = 1 if not rest or spaces > 4 else spaces
        scan.containers.append(_Container(quote=False, indent=marker_end + width))
        scan.leaf = ""
        pos = _skip_columns(line, item.start(2) + len(item.group(2)), width)
        if not rest:
            return len(line)


def _close_leaf(scan: _Scan, regions: list[CodeRegion]) -> None:
    if scan.leaf in ("fence", "indented"):
        regions.append(CodeRegion(start=scan.start, end=scan.end, block=True))
    scan.leaf = ""


def _continues_lazily(scan: _Scan, line: str, pos: int) -> bool:
    if scan.leaf != "paragraph" or not line[pos:].strip(" \t\r"):
        return False
    probe = line[pos:]
    return not (
        _QUOTE.match(probe)
        or _FENCE_OPEN.match(probe)
        or _THEMATIC.fullmatch(probe)
        or (_LIST_ITEM.match(probe) and probe.strip(" \t\r") not in "-+*")
    )


def _scan_line(scan: _Scan, line: str, base: int, regions: list[CodeRegion]) -> None:
    content_end = base + len(line) - (1 if line.endswith("\r") else 0)
    matched, pos = _match_containers(scan, line)
    if matched < len(scan.containers):
        if _continues_lazily(scan, line, pos):
            return
        _close_leaf(scan, regions)
        del scan.containers[matched:]
    if scan.leaf == "fence":
        scan.end = content_end
        if _is_fence_close(scan, line, pos):
            _close_leaf(scan, regions)
        return
    blank = not line[pos:].strip(" \t\r")
    col, _ = _indent(line, pos)
    if scan.leaf == "indented":
        if blank:
            return
        if col >= 4:
            scan.end = content_end
            return
        _close_leaf(scan, regions)
    if col < 4 or scan.leaf == "paragraph":
        pos = _open_containers(scan, line, pos)
        blank = not line[pos:].strip(" \t\r")
        col, _ = _indent(line, pos)
    if blank:
        scan.leaf = ""
    elif col >= 4 and scan.leaf != "paragraph":
        scan.leaf, scan.start, scan.end = "indented", base + pos, content_end
    elif (
        col < 4
        and (fence := _FENCE_OPEN.match(line, _indent(line, pos)[1]))
        and not (fence.group(2)[0] == "`" and "`" in fence.group(3))
    ):
        # The region starts at the fence marker, after its indentation (as the release reports).
        scan.leaf, scan.start, scan.end = "fence", base + fence.start(2), content_end
        scan.fence_char, scan.fence_len = fence.group(2)[0], len(fence.group(2))
    else:
        scan.leaf = "paragraph"


_LINE_OPENERS: Final = frozenset(" \t\r\n>+*-0123456789`~")
# The next line that is neither plain prose nor blank.
_NEXT_SPECIAL_LINE: Final = re.compile(r"\n(?:[>+*\-0-9`~]|[ \t\r]+[^ \t\r\n])")
_BLANK_LINE_REST: Final = re.compile(r"[ \t\r]*\n")
_NEXT_FENCE_LIKE_LINE: Final = re.compile(r"\n {0,3}[`~]")


def _fast_forward(scan: _Scan, text: str, base: int, regions: list[CodeRegion]) -> int:
    """Handle whole lines whose outcome is known without the general scan (no containers).

    Outside any leaf or in a paragraph, a blank line ends the paragraph, a line that starts
    with none of the characters that can open a container, a fence or an indent is one more
    paragraph line, and a line starting with a backtick or tilde opens a fence or continues the
    paragraph. Inside a fence, a line that does not start like a fence cannot close it. Lines
    are skipped by literal-led searches, never character by character. Returns where the
    general scan must take over.
    """
    while base < len(text):
        char = text[base]
        if scan.leaf == "fence":
            skipped = _skip_fence_body(scan, text, base)
            if skipped != base:
                base = skipped
                continue
            newline = text.find("\n", base)
            if newline < 0 or not _close_fence(scan, text[base:newline], newline, regions):
                return base
            base = newline + 1
        elif scan.leaf not in ("", "paragraph"):
            return base
        elif char not in _LINE_OPENERS or _BLANK_LINE_REST.match(text, base):
            target = _skip_prose(scan, text, base)
            if target == base:
                return base
            base = target
        elif char in "`~":
            newline = text.find("\n", base)
            if newline < 0:
                return base
            _open_fence(scan, text[base:newline], base, newline)
            base = newline + 1
        else:
            return base
    return base


def _skip_prose(scan: _Scan, text: str, base: int) -> int:
    """Skip plain and blank lines; the last one skipped decides the leaf (paragraph or none)."""
    special = _NEXT_SPECIAL_LINE.search(text, base)
    target = max(text.rfind("\n") + 1, base) if special is None else special.start() + 1
    if target > base:
        last = text[max(text.rfind("\n", base, target - 1) + 1, base) : target - 1]
        scan.leaf = "paragraph" if last.strip(" \t\r") else ""
    return target


def _skip_fence_body(scan: _Scan, text: str, base: int) -> int:
    like = _NEXT_FENCE_LIKE_LINE.search(text, base - 1)
    target = max(text.rfind("\n") + 1, base) if like is None else like.start() + 1
    if target > base:
        newline = target - 1
        scan.end = newline - 1 if text[newline - 1] == "\r" else newline
    return target


def _close_fence(scan: _Scan, line: str, newline: int, regions: list[CodeRegion]) -> bool:
    """Close the open fence at `line` (ending at `newline`) if it is a closing fence line."""
    if not _is_fence_close(scan, line, 0):
        return False
    scan.end = newline - 1 if line.endswith("\r") else newline
    _close_leaf(scan, regions)
    return True


def _open_fence(scan: _Scan, line: str, base: int, newline: int) -> None:
    """A line starting with a backtick or tilde: a fence opening, else paragraph text."""
    fence = _FENCE_OPEN.match(line)
    if fence is None or (fence.group(2)[0] == "`" and "`" in fence.group(3)):
        scan.leaf = "paragraph"
        return
    scan.leaf, scan.start = "fence", base
    scan.end = newline - 1 if line.endswith("\r") else newline
    scan.fence_char, scan.fence_len = fence.group(2)[0], len(fence.group(2))


def find_code_blocks(text: str) -> list[CodeRegion]:
    """Fenced and indented code blocks of `text`, in order (Python string indexes).

    A leading byte-order mark is skipped, as the release's Markdown parser does; like the
    release, the offsets are then those of the text without it.
    """
    if text.startswith(_BOM):
        text = text[1:]
    if "```" not in text and "~~~" not in text and "    " not in text and "\t" not in text:
        return []
    scan = _Scan(containers=[])
    regions: list[CodeRegion] = []
    base = 0
    while True:
        if not scan.containers:
            base = _fast_forward(scan, text, base, regions)
        newline = text.find("\n", base)
        if newline < 0:
            _scan_line(scan, text[base:], base, regions)
            break
        _scan_line(scan, text[base:newline], base, regions)
        base = newline + 1
    if scan.leaf == "fence":
        scan.end = len(text)
    _close_leaf(scan, regions)
    return regions


def find_code_spans(text: str, blocks: list[CodeRegion]) -> list[CodeRegion]:
    """Inline code spans outside `blocks`: a backtick run closed by the next run as long.

    A span never crosses a code block or a blank line, so backtick runs are grouped into those
    chunks first; within a chunk each unescaped run pairs with the next run of its width.
    """
    if "`" not in text:
        return []
    if text.startswith(_BOM):
        text = text[1:]
    spans: list[CodeRegion] = []
    for runs in _runs_by_chunk(text, blocks):
        _pair_runs(text, runs, spans)
    return spans


def _runs_by_chunk(text: str, blocks: list[CodeRegion]) -> list[list[tuple[int, int]]]:
    """Backtick runs outside `blocks`, grouped by stretch between blocks and blank lines."""
    chunks: list[list[tuple[int, int]]] = []
    cursor = 0
    for start, end in [*((b.start, b.end) for b in blocks), (len(text), 0)]:
        runs = [run.span() for run in _BACKTICKS.finditer(text, cursor, start)]
        if len(runs) >= 2:  # a lone run pairs with nothing
            blanks = [blank.start() for blank in _BLANK_LINE.finditer(text, cursor, start)]
            last_key = -1
            for run in runs:
                key = bisect_right(blanks, run[0])
                if key != last_key:
                    chunks.append([])
                    last_key = key
                chunks[-1].append(run)
        cursor = end
    return chunks


def _pair_runs(text: str, runs: list[tuple[int, int]], out: list[CodeRegion]) -> None:
    index = 0
    while index < len(runs) - 1:
        open_start, open_end = runs[index]
        if _escaped(text, open_start):
            open_start += 1
        width = open_end - open_start
        close = next(
            (j for j in range(index + 1, len(runs)) if runs[j][1] - runs[j][0] == width), None
        )
        if width == 0 or close is None:
            index += 1
            continue
        out.append(CodeRegion(start=open_start, end=runs[close][1], block=False))
        index = close + 1


def _escaped(text: str, index: int) -> bool:
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1
