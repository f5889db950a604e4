"""Walking the workspace for `find` and `grep`: bounded, never following symbolic links."""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ...errors import ToolError
from ._confinement import Confinement

__all__ = ["SKIPPED_DIRS", "glob_regex", "read_at", "walk_files"]

SKIPPED_DIRS: Final = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


def walk_files(
    confinement: Confinement, path: object, start: Path, *, max_files: int
) -> Iterator[tuple[str, str, int]]:
    """`(relative path, name, directory descriptor)` of regular files under `start`, sorted.

    At most `max_files`. The walk is `os.fwalk` from a descriptor opened beneath the root, and
    symbolic links are skipped (files and directories), so neither a link nor a directory
    swapped for one during the walk can lead outside the root. The descriptor is valid until
    the next item is taken.
    """
    top = confinement.open_directory(path, start)
    prefix = confinement.relative(start)
    seen = 0
    try:
        for directory, dirs, files, here in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
            for name in sorted(files):
                if not _is_regular(name, here):
                    continue
                seen += 1
                if seen > max_files:
                    return
                yield posixpath.normpath(posixpath.join(prefix, directory, name)), name, here
    finally:
        os.close(top)


def _is_regular(name: str, directory: int) -> bool:
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_at(directory: int, name: str, max_bytes: int) -> bytes | None:
    """The bytes of the regular file `name` in `directory` (no symlink), `None` if unreadable
    or larger than `max_bytes`."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=directory)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        found = os.fstat(handle.fileno())
        if not stat.S_ISREG(found.st_mode) or found.st_size > max_bytes:
            return None
        try:
            return handle.read(max_bytes + 1)[:max_bytes]
        except OSError:
            return None


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob over `/`-separated relative paths (`**` spans directories).

    A pattern without `/` matches the file name anywhere (`*.md`); one with `/` matches the
    whole relative path (`notes/**/*.md`).
    """
    if not pattern or "\x00" in pattern:
        raise ToolError(f"Glob {pattern!r} is empty or has a NUL byte.", code="invalid_pattern")
    body = _translate(pattern)
    prefix = "" if "/" in pattern else r"(?:.*/)?"
    return re.compile(f"^{prefix}{body}$", re.S)


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append(r"(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (close := pattern.find("]", index + 2)) != -1:
            inner = pattern[index + 1 : close].replace("\\", "\\\\").replace("[", "\\[")
            out.append("[^" + inner[1:] + "]" if inner[:1] == "!" else "[" + inner + "]")
            index = close + 1
            continue
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
