"""The `write` and `edit` tools: whole-file writes and exact text replacement with a diff."""

from __future__ import annotations

from typing import Any, Final

from ...catalog import Tool
from ...errors import ToolError
from .._schema import boolean, integer, obj, string
from ._confinement import Confinement
from ._files import decode_text, encode_text, unified_diff, write_bytes
from ._workspace_limits import WorkspaceLimits

__all__ = ["EDIT_OUTPUT", "WRITE_OUTPUT", "edit_tool", "write_tool"]

WRITE_OUTPUT: Final = obj({"path": string(), "bytes": integer(), "created": boolean()})
EDIT_OUTPUT: Final = obj(
    {
        "path": string(),
        "changed": boolean(),
        "replacements": integer(),
        "bytes": integer(),
        "diff": string(),
    }
)
_WRITE_INPUT = obj(
    {
        "path": string("File path relative to the workspace root."),
        "content": string("The whole new content (UTF-8)."),
    }
)
_EDIT_INPUT = obj(
    {
        "path": string("File path relative to the workspace root."),
        "oldText": string("Exact text to replace; must occur exactly once.", minLength=1),
        "newText": string("Replacement text."),
    },
    {"replaceAll": boolean("Replace every occurrence instead of exactly one.")},
)


def write_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `write` tool: create or replace a file (parent directories are created)."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        data = encode_text(params["path"], str(params["content"]))
        real, created = write_bytes(confinement, params["path"], data, limits)
        return {"path": confinement.relative(real), "bytes": len(data), "created": created}

    return Tool(
        name="write",
        description="Create or replace a workspace file with `content`; returns its size.",
        parameters=_WRITE_INPUT,
        output_schema=WRITE_OUTPUT,
        execute=execute,
        execution_mode="sequential",
    )


def _replace(path: str, text: str, params: dict[str, Any]) -> tuple[str, int]:
    old, new = str(params["oldText"]), str(params["newText"])
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"`oldText` was not found in {path!r}. Read the file again and copy the text exactly, "
            "including whitespace.",
            code="edit_no_match",
        )
    if count > 1 and params.get("replaceAll") is not True:
        raise ToolError(
            f"`oldText` occurs {count} times in {path!r}. Include more surrounding text so it "
            "occurs once, or pass `replaceAll: true`.",
            code="edit_ambiguous",
        )
    return text.replace(old, new), count


def edit_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `edit` tool: exact `oldText` → `newText` replacement returning a unified diff."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        real, data = confinement.open_file(params["path"], max_bytes=limits.max_read_bytes)
        shown = confinement.relative(real)
        text = decode_text(shown, data)
        updated, count = _replace(shown, text, params)
        encoded = encode_text(shown, updated)
        if updated != text:
            write_bytes(confinement, shown, encoded, limits)
        return {
            "path": shown,
            "changed": updated != text,
            "replacements": count,
            "bytes": len(encoded),
            "diff": unified_diff(shown, text, updated),
        }

    return Tool(
        name="edit",
        description=(
            "Replace the exact text `oldText` with `newText` in a workspace file; returns "
            "whether it changed and a unified diff."
        ),
        parameters=_EDIT_INPUT,
        output_schema=EDIT_OUTPUT,
        execute=execute,
        execution_mode="sequential",
    )
