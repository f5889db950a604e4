"""Walking the workspace for `find` and `grep`: bounded, never following symbolic links."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from ..errors import ToolError

__all__ = ["SKIPPED_DIRS", "glob_regex", "walk_files"]

SKIPPED_DIRS: Final = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


def walk_files(start: Path, root: Path, *, max_files: int) -> Iterator[tuple[str, Path]]:
    """`(relative path, real path)` of regular files under `start`, sorted, at most `max_files`.

    Symbolic links are skipped (files and directories): `find` and `grep` see the tree as it is
    on disk, so a link cannot lead them outside the root.
    """
    seen = 0
    for directory, dirs, files in os.walk(start, followlinks=False):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        here = Path(directory)
        for name in sorted(files):
            path = here / name
            if not path.is_file() or path.is_symlink():
                continue
            seen += 1
            if seen > max_files:
                return
            yield path.relative_to(root).as_posix(), path


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
