"""The `apply_patch` tool: apply a multi-file patch all or nothing, report the paths touched."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Final

from ...catalog import Tool
from ...errors import ToolError
from .._schema import array, obj, string
from ._confinement import Confinement
from ._files import decode_text, encode_text
from ._patch_commit import Original, commit
from ._patch_format import FileChange, Hunk, parse_patch
from ._workspace_limits import WorkspaceLimits

__all__ = ["PATCH_OUTPUT", "apply_hunks", "patch_tool"]

PATCH_OUTPUT: Final = obj(
    {"added": array(string()), "modified": array(string()), "deleted": array(string())}
)
_PATCH_INPUT = obj(
    {
        "patch": string(
            "A unified diff (`--- a/x` / `+++ b/x` / `@@` hunks, `/dev/null` to add or delete) "
            "or a `*** Begin Patch` block with `*** Add File:`, `*** Update File:` "
            "(`*** Move to:`), `*** Delete File:` sections.",
            minLength=1,
        )
    }
)


@dataclass(kw_only=True)
class _Text:
    lines: list[str]
    eol: bool

    @classmethod
    def of(cls, text: str) -> _Text:
        if not text:
            return cls(lines=[], eol=True)
        lines = text.split("\n")
        eol = lines[-1] == ""
        return cls(lines=lines[:-1] if eol else lines, eol=eol)

    def render(self) -> str:
        body = "\n".join(self.lines)
        return body + "\n" if self.eol and self.lines else body


def _find(lines: list[str], needle: list[str], start: int, hint: int | None) -> int | None:
    if hint is not None and lines[hint : hint + len(needle)] == needle:
        return hint
    for loose in (False, True):
        wanted = [line.rstrip() for line in needle] if loose else needle
        for index in range(start, len(lines) - len(needle) + 1):
            window = lines[index : index + len(needle)]
            if (([line.rstrip() for line in window]) if loose else window) == wanted:
                return index
    return None


def _anchor(lines: list[str], anchor: str | None, cursor: int) -> int:
    if anchor is None:
        return cursor
    for index in range(cursor, len(lines)):
        if lines[index].strip() == anchor.strip():
            return index + 1
    return cursor


def apply_hunks(path: str, text: str, hunks: list[Hunk]) -> str:
    """`text` with every hunk applied in order, or a `patch_conflict` `ToolError`."""
    current = _Text.of(text)
    cursor = 0
    for number, hunk in enumerate(hunks, start=1):
        start = _anchor(current.lines, hunk.anchor, cursor)
        hint = None if hunk.start is None else max(hunk.start - 1, 0)
        at = len(current.lines) if not hunk.old else _find(current.lines, hunk.old, start, hint)
        if at is None:
            raise ToolError(
                f"Hunk {number} of the patch for {path!r} does not match the file (first line "
                f"{hunk.old[0]!r}). Read the file again and regenerate the patch.",
                code="patch_conflict",
            )
        current.lines[at : at + len(hunk.old)] = hunk.new
        cursor = at + len(hunk.new)
        if hunk.new_eol is not None and at + len(hunk.new) == len(current.lines):
            current.eol = hunk.new_eol
    return current.render()


@dataclass(kw_only=True)
class _Plan:
    confinement: Confinement
    limits: WorkspaceLimits
    staged: dict[str, str | None] = field(default_factory=dict[str, str | None])
    originals: dict[str, Original] = field(default_factory=dict[str, Original])

    def content(self, path: str) -> str | None:
        if path in self.staged:
            return self.staged[path]
        real = self.confinement.resolve(path)
        if self.confinement.existing_kind(real) is None:
            return None
        real, data = self.confinement.open_file(path, max_bytes=self.limits.max_read_bytes)
        mode = os.stat(real, follow_symlinks=False).st_mode & 0o7777
        self.originals[path] = Original(data=data, mode=mode)
        return decode_text(path, data)

    def stage(self, change: FileChange) -> None:
        path = self.confinement.normalize(change.path)
        before = self.content(path)
        if change.op == "add":
            if before is not None:
                raise _conflict(path, "already exists; use an update section")
            self.staged[path] = apply_hunks(path, "", change.hunks)
            return
        if before is None:
            raise _conflict(path, "does not exist")
        if change.op == "delete":
            self.staged[path] = None
            return
        after = apply_hunks(path, before, change.hunks)
        target = path if change.move_to is None else self.confinement.normalize(change.move_to)
        if target != path:
            if self.content(target) is not None:
                raise _conflict(target, "already exists; cannot move onto it")
            self.staged[path] = None
        self.staged[target] = after


def _conflict(path: str, why: str) -> ToolError:
    return ToolError(f"Patch target {path!r} {why}.", code="patch_conflict")


def _check_sizes(encoded: dict[str, bytes | None], limits: WorkspaceLimits) -> None:
    for path, data in encoded.items():
        if data is not None and len(data) > limits.max_write_bytes:
            raise ToolError(
                f"The patched {path!r} would have {len(data)} bytes, more than the "
                f"{limits.max_write_bytes}-byte write cap. Nothing was written.",
                code="content_too_large",
            )


def patch_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `apply_patch` tool over `confinement`."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        plan = _Plan(confinement=confinement, limits=limits)
        for change in parse_patch(str(params["patch"])):
            plan.stage(change)
        encoded = {
            path: None if text is None else encode_text(path, text)
            for path, text in plan.staged.items()
        }
        _check_sizes(encoded, limits)
        return commit(confinement, limits, encoded, plan.originals)

    return Tool(
        name="apply_patch",
        description=(
            "Apply a unified diff or a `*** Begin Patch` multi-file patch to the workspace, all "
            "or nothing; returns the added, modified and deleted paths."
        ),
        parameters=_PATCH_INPUT,
        output_schema=PATCH_OUTPUT,
        execute=execute,
        execution_mode="sequential",
    )
