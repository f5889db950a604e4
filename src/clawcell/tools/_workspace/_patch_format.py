"""Patch parsing: unified diffs and the `*** Begin Patch` multi-file format, into one model."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Literal

from ...errors import ToolError

__all__ = ["FileChange", "Hunk", "parse_patch"]

_HUNK_HEADER: Final = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_BEGIN: Final = "*** Begin Patch"
_END: Final = "*** End Patch"
Op = Literal["add", "update", "delete"]
_FILE_OPS: Final[dict[str, Op]] = {
    "*** Add File: ": "add",
    "*** Delete File: ": "delete",
    "*** Update File: ": "update",
}


@dataclass(kw_only=True)
class Hunk:
    """One replacement: `old` lines (context and removals) become `new` lines.

    `new_eol` says whether the file ends with a newline when the hunk reaches its end (`None`:
    keep what the file had, as `*** Begin Patch` hunks do).
    """

    old: list[str] = field(default_factory=list[str])
    new: list[str] = field(default_factory=list[str])
    start: int | None = None
    anchor: str | None = None
    new_eol: bool | None = None


@dataclass(kw_only=True)
class FileChange:
    """What a patch does to one file."""

    op: Op
    path: str
    move_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list[Hunk])


def _malformed(why: str) -> ToolError:
    return ToolError(
        f"The patch is malformed: {why}. Send a unified diff (`--- a/x`, `+++ b/x`, `@@` hunks) "
        "or a `*** Begin Patch` … `*** End Patch` block.",
        code="invalid_patch",
    )


def parse_patch(text: str) -> list[FileChange]:
    """The file changes of `text`, in either supported format."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    stripped = [line for line in lines if line.strip()]
    changes = (
        _parse_begin(lines) if stripped and stripped[0].strip() == _BEGIN else _parse_unified(lines)
    )
    if not changes:
        raise _malformed("it names no file")
    return changes


def _parse_begin(lines: list[str]) -> list[FileChange]:
    body = list(lines)
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    if not body or body[-1].strip() != _END:
        raise _malformed(f"it does not end with {_END!r}")
    changes: list[FileChange] = []
    for line in body[1:-1]:
        op = next((prefix for prefix in _FILE_OPS if line.startswith(prefix)), None)
        if op is not None:
            kind = _FILE_OPS[op]
            changes.append(FileChange(op=kind, path=line[len(op) :].strip()))
            if kind == "add":
                changes[-1].hunks.append(Hunk())
        elif not changes:
            raise _malformed(f"line {line!r} comes before any `*** ... File:` header")
        else:
            _begin_line(changes[-1], line)
    return changes


def _begin_line(change: FileChange, line: str) -> None:
    if line.startswith("*** Move to: ") and change.op == "update":
        change.move_to = line[len("*** Move to: ") :].strip()
    elif line.strip() == "*** End of File":
        return
    elif change.op == "add":
        if not line.startswith("+"):
            raise _malformed(f"added file {change.path!r} has a line without `+`: {line!r}")
        change.hunks[0].new.append(line[1:])
    elif change.op == "delete":
        raise _malformed(f"deleted file {change.path!r} has content lines")
    elif line.startswith("@@"):
        anchor = line[2:].strip()
        change.hunks.append(Hunk(anchor=anchor or None))
    else:
        if not change.hunks:
            change.hunks.append(Hunk())
        _hunk_line(change.hunks[-1], line, change.path)


def _hunk_line(hunk: Hunk, line: str, path: str) -> None:
    marker, rest = (line[:1], line[1:]) if line else (" ", "")
    if marker == " ":
        hunk.old.append(rest)
        hunk.new.append(rest)
    elif marker == "-":
        hunk.old.append(rest)
    elif marker == "+":
        hunk.new.append(rest)
    else:
        raise _malformed(f"a hunk line for {path!r} starts with {marker!r}: {line!r}")


def _diff_path(header: str) -> str | None:
    name = header[4:].split("\t", maxsplit=1)[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def _parse_unified(lines: list[str]) -> list[FileChange]:
    changes: list[FileChange] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("--- ") and index + 1 < len(lines) and lines[index + 1][:4] == "+++ ":
            changes.append(_unified_file(line, lines[index + 1]))
            index += 2
        elif line.startswith("@@"):
            if not changes:
                raise _malformed("a hunk comes before any `---`/`+++` header")
            index = _unified_hunk(changes[-1], lines, index)
        else:
            index += 1
    return changes


def _unified_file(old_header: str, new_header: str) -> FileChange:
    old, new = _diff_path(old_header), _diff_path(new_header)
    if old is None and new is None:
        raise _malformed("both sides are /dev/null")
    if old is None:
        return FileChange(op="add", path=str(new))
    if new is None:
        return FileChange(op="delete", path=old)
    return FileChange(op="update", path=old, move_to=new if new != old else None)


def _unified_hunk(change: FileChange, lines: list[str], index: int) -> int:
    match = _HUNK_HEADER.match(lines[index])
    if match is None:
        raise _malformed(f"bad hunk header {lines[index]!r}")
    old_left = int(match.group(2) or "1")
    new_left = int(match.group(4) or "1")
    hunk = Hunk(start=int(match.group(1)), new_eol=True)
    change.hunks.append(hunk)
    index += 1
    while index < len(lines) and (old_left > 0 or new_left > 0 or lines[index][:1] == "\\"):
        line = lines[index]
        if line.startswith("\\"):
            if _last_marker(lines, index) != "-":
                hunk.new_eol = False
        else:
            _hunk_line(hunk, line, change.path)
            marker = line[:1] or " "
            old_left -= marker in " -"
            new_left -= marker in " +"
        index += 1
    if old_left > 0 or new_left > 0:
        raise _malformed(f"a hunk for {change.path!r} ends before its declared line counts")
    return index


def _last_marker(lines: list[str], index: int) -> str:
    return lines[index - 1][:1] if index > 0 else ""
