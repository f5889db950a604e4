"""The `list` and `find` tools: one directory's entries, and files matching a glob."""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any, Final

from ...catalog import Tool
from ...errors import ToolError
from .._schema import array, boolean, integer, literal, obj, string
from ._confinement import Confinement, not_found
from ._walk import glob_regex, walk_files
from ._workspace_limits import WorkspaceLimits

__all__ = ["FIND_OUTPUT", "LIST_OUTPUT", "find_tool", "list_tool"]

_ENTRY = obj(
    {"name": string(), "type": literal("file", "dir", "symlink", "other")},
    {"size": integer()},
)
LIST_OUTPUT: Final = obj({"path": string(), "entries": array(_ENTRY), "truncated": boolean()})
FIND_OUTPUT: Final = obj({"paths": array(string()), "truncated": boolean()})
_LIMIT = integer("Most results to return.", minimum=1)
_LIST_INPUT = obj(
    {}, {"path": string("Directory relative to the root (default `.`)."), "limit": _LIMIT}
)
_FIND_INPUT = obj(
    {"pattern": string("Glob such as `*.md` (any depth) or `notes/**/*.md`.", minLength=1)},
    {"path": string("Directory to search (default `.`)."), "limit": _LIMIT},
)


def _limit(params: dict[str, Any], limits: WorkspaceLimits) -> int:
    return min(int(params.get("limit", limits.max_results)), limits.max_results)


def _entry(entry: os.DirEntry[str]) -> dict[str, Any]:
    found = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(found.st_mode):
        return {"name": entry.name, "type": "symlink"}
    if stat.S_ISDIR(found.st_mode):
        return {"name": entry.name, "type": "dir"}
    if stat.S_ISREG(found.st_mode):
        return {"name": entry.name, "type": "file", "size": found.st_size}
    return {"name": entry.name, "type": "other"}


def _directory(confinement: Confinement, path: object) -> tuple[str, Any]:
    real = confinement.resolve(path)
    kind = confinement.existing_kind(real)
    if kind is None:
        raise not_found(path)
    if kind != "dir":
        raise ToolError(
            f"Path {path!r} is not a directory. Use `read` for files.", code="not_a_directory"
        )
    return confinement.relative(real), real


def list_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `list` tool: the entries of one directory, sorted by name."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        path = params.get("path", ".")
        shown, real = _directory(confinement, path)
        descriptor = confinement.open_directory(path, real)
        try:
            with os.scandir(descriptor) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
            limit = _limit(params, limits)
            listed = [_entry(entry) for entry in entries[:limit]]
        finally:
            os.close(descriptor)
        return {"path": shown, "entries": listed, "truncated": len(entries) > limit}

    return Tool(
        name="list",
        description="List one workspace directory: names, types and file sizes.",
        parameters=_LIST_INPUT,
        output_schema=LIST_OUTPUT,
        execute=execute,
        replay_safe=True,
    )


def find_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `find` tool: relative paths of files matching a glob, bounded."""

    def scan(params: dict[str, Any]) -> dict[str, Any]:
        path = params.get("path", ".")
        _, start = _directory(confinement, path)
        matcher = glob_regex(str(params["pattern"]))
        limit = _limit(params, limits)
        paths: list[str] = []
        for relative, _name, _directory_fd in walk_files(
            confinement, path, start, max_files=limits.max_scanned_files
        ):
            if matcher.match(relative):
                if len(paths) == limit:
                    return {"paths": paths, "truncated": True}
                paths.append(relative)
        return {"paths": paths, "truncated": False}

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(scan, params)

    return Tool(
        name="find",
        description="Find workspace files whose path matches a glob (`*.md`, `src/**/*.py`).",
        parameters=_FIND_INPUT,
        output_schema=FIND_OUTPUT,
        execute=execute,
        replay_safe=True,
    )
