"""The `grep` tool: search file contents by regex; the output shape follows `outputMode`."""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ...catalog import Tool, define_output_schema
from ...errors import ToolError
from .._schema import array, boolean, integer, literal, obj, string
from ._confinement import Confinement, not_a_file, not_found
from ._walk import glob_regex, read_at, walk_files
from ._workspace_limits import WorkspaceLimits

__all__ = ["GREP_OUTPUT", "grep_tool"]

_MAX_LINE: Final = 500
_MATCH = obj({"path": string(), "line": integer(), "text": string()})
_COUNT = obj({"path": string(), "count": integer()})
GREP_OUTPUT: Final = define_output_schema(
    input_property="outputMode",
    variants={
        "content": obj({"matches": array(_MATCH), "truncated": boolean()}),
        "files": obj({"files": array(string()), "truncated": boolean()}),
        "count": obj({"counts": array(_COUNT), "total": integer(), "truncated": boolean()}),
    },
)
_GREP_INPUT = obj(
    {"pattern": string("Python regular expression (or literal text with `literal`).", minLength=1)},
    {
        "path": string("File or directory to search (default `.`)."),
        "glob": string("Only files matching this glob, such as `*.md`."),
        "ignoreCase": boolean(),
        "literal": boolean("Treat `pattern` as plain text."),
        "outputMode": literal("content", "files", "count", description="Default `content`."),
        "limit": integer("Most matches, files or counts to return.", minimum=1),
    },
)


@dataclass(kw_only=True)
class _Scan:
    limit: int
    matches: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    counts: dict[str, int] = field(default_factory=dict[str, int])
    truncated: bool = False

    def add(self, path: str, number: int, line: str) -> bool:
        """Record a match; `False` once the limit is reached."""
        if path not in self.counts and len(self.counts) == self.limit:
            self.truncated = True
            return False
        self.counts[path] = self.counts.get(path, 0) + 1
        if len(self.matches) < self.limit:
            self.matches.append({"path": path, "line": number, "text": line[:_MAX_LINE]})
        elif len(self.matches) == self.limit:
            self.truncated = True
        return True


def _compile(params: dict[str, Any]) -> re.Pattern[str]:
    pattern = str(params["pattern"])
    source = re.escape(pattern) if params.get("literal") is True else pattern
    try:
        return re.compile(source, re.IGNORECASE if params.get("ignoreCase") is True else 0)
    except re.error as exc:
        raise ToolError(
            f"Pattern {pattern!r} is not a valid regular expression: {exc}. "
            "Escape special characters or pass `literal: true`.",
            code="invalid_pattern",
        ) from exc


def _result(scan: _Scan, mode: str) -> dict[str, Any]:
    if mode == "files":
        return {"files": list(scan.counts), "truncated": scan.truncated}
    if mode == "count":
        counts = [{"path": path, "count": count} for path, count in scan.counts.items()]
        return {"counts": counts, "total": sum(scan.counts.values()), "truncated": scan.truncated}
    return {"matches": scan.matches, "truncated": scan.truncated}


def grep_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `grep` tool over `confinement`."""

    def run(params: dict[str, Any]) -> dict[str, Any]:
        files = _files(confinement, params.get("path", "."), limits)
        regex = _compile(params)
        only = glob_regex(str(params["glob"])) if "glob" in params else None
        scan = _Scan(limit=min(int(params.get("limit", limits.max_results)), limits.max_results))
        for relative, read in files:
            if only is not None and not only.match(relative):
                continue
            if not _search_file(scan, regex, relative, read()):
                break
        return _result(scan, str(params.get("outputMode", "content")))

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(run, params)

    return Tool(
        name="grep",
        description=(
            "Search workspace files with a regular expression. `outputMode` picks the result: "
            "`content` (matching lines), `files` (paths) or `count` (matches per file)."
        ),
        parameters=_GREP_INPUT,
        output_schema=GREP_OUTPUT,
        execute=execute,
        replay_safe=True,
    )


def _files(
    confinement: Confinement, path: object, limits: WorkspaceLimits
) -> Iterable[tuple[str, Callable[[], bytes | None]]]:
    """`(relative path, reader)` of the files to search; a reader answers `None` to skip."""
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if kind is None:
        raise not_found(path)
    if kind == "other":
        raise not_a_file(path, "a device, FIFO or socket")
    if kind == "file":
        return [(confinement.relative(real), lambda: _read_one(confinement, path, limits))]
    walk = walk_files(confinement, path, real, max_files=limits.max_scanned_files)
    return (
        (relative, functools.partial(read_at, directory, name, limits.max_read_bytes))
        for relative, name, directory in walk
    )


def _read_one(confinement: Confinement, path: object, limits: WorkspaceLimits) -> bytes | None:
    try:
        return confinement.open_file(path, max_bytes=limits.max_read_bytes)[1]
    except ToolError:
        return None  # too large or gone: skipped, as files met while walking are


def _search_file(scan: _Scan, regex: re.Pattern[str], relative: str, data: bytes | None) -> bool:
    if data is None or b"\x00" in data[:8192]:
        return True
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if regex.search(line) and not scan.add(relative, number, line):
            return False
    return True
