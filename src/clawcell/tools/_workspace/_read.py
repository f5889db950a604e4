"""The `read` tool: a text file's lines (bounded), an image's metadata, or `not_found`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from ..._lazy import value_class
from ...catalog import Tool
from ...errors import ToolError
from .._schema import boolean, integer, literal, obj, string
from ._confinement import Confinement
from ._images import ImageInfo, sniff_image
from ._workspace_limits import WorkspaceLimits

__all__ = ["READ_OUTPUT", "is_daily_note", "read_text", "read_tool"]

DAILY_NOTE: Final = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")

_TEXT = obj(
    {
        "kind": literal("text"),
        "path": string(),
        "text": string(),
        "startLine": integer(),
        "endLine": integer(),
        "totalLines": integer(),
        "truncated": boolean(),
    },
    {"nextOffset": integer()},
)
_IMAGE = obj(
    {
        "kind": literal("image"),
        "path": string(),
        "mimeType": string(),
        "bytes": integer(),
        "media": string(),
    },
    {"width": integer(), "height": integer()},
)
_NOT_FOUND = obj({"kind": literal("not_found"), "path": string()})
READ_OUTPUT: Final = {"anyOf": [_TEXT, _IMAGE, _NOT_FOUND]}
_READ_INPUT = obj(
    {"path": string("File path relative to the workspace root.")},
    {
        "offset": integer("First line to return (1-based).", minimum=1),
        "limit": integer("Most lines to return.", minimum=1),
        "maxChars": integer("Most characters of text to return.", minimum=1),
        "optional": boolean("Return `{kind: 'not_found'}` instead of failing when missing."),
    },
)
_DESCRIPTION = (
    "Read a workspace file. Text comes back as lines `offset`.. with truncation metadata "
    "(`nextOffset` continues); images come back as metadata and a `media` reference for the "
    "reply (`MEDIA:<path>`), never as bytes. A missing file fails unless `optional: true`; "
    "a missing daily note `memory/YYYY-MM-DD.md` is always `{kind: 'not_found'}`."
)


def is_daily_note(relative: str) -> bool:
    """Whether a normalized relative path is a daily note (`memory/YYYY-MM-DD.md`)."""
    return DAILY_NOTE.match(relative) is not None


@value_class
class _Window:
    offset: int
    limit: int | None
    max_chars: int


def read_text(text: str, window: _Window) -> dict[str, Any]:
    """Lines `offset`.. of `text`, cut at `limit` lines or `max_chars` characters."""
    lines = text.splitlines(keepends=True)
    if window.offset > max(len(lines), 1):
        raise ToolError(
            f"`offset` {window.offset} is past the end of the file ({len(lines)} lines). "
            "Read from a smaller offset.",
            code="invalid_range",
        )
    start = window.offset - 1
    stop = len(lines) if window.limit is None else min(len(lines), start + window.limit)
    taken: list[str] = []
    used = 0
    for line in lines[start:stop]:
        if used + len(line) > window.max_chars:
            if not taken:
                taken.append(line[: window.max_chars])
            break
        taken.append(line)
        used += len(line)
    end = start + len(taken)
    cut_line = bool(taken) and len(taken[-1]) < len(lines[end - 1])
    result: dict[str, Any] = {
        "text": "".join(taken),
        "startLine": window.offset,
        "endLine": end,
        "totalLines": len(lines),
        "truncated": end < len(lines) or cut_line,
    }
    if end < len(lines) and not cut_line:
        result["nextOffset"] = end + 1
    return result


def _window(params: Mapping[str, Any], limits: WorkspaceLimits) -> _Window:
    max_chars = min(int(params.get("maxChars", limits.read_max_chars)), limits.read_max_chars)
    return _Window(
        offset=int(params.get("offset", 1)),
        limit=int(params["limit"]) if "limit" in params else None,
        max_chars=max_chars,
    )


def _image(shown: str, real: Path, data: bytes, image: ImageInfo) -> dict[str, Any]:
    found: dict[str, Any] = {
        "kind": "image",
        "path": shown,
        "mimeType": image.mime_type,
        "bytes": len(data),
        "media": f"MEDIA:{real}",
    }
    dims = {"width": image.width, "height": image.height}
    return found | {key: value for key, value in dims.items() if value is not None}


def read_tool(confinement: Confinement, limits: WorkspaceLimits) -> Tool:
    """The `read` tool over `confinement`."""

    async def execute(params: dict[str, Any]) -> dict[str, Any]:
        relative = confinement.normalize(params["path"])
        missing = confinement.existing_kind(confinement.resolve(params["path"])) is None
        if missing and (params.get("optional") is True or is_daily_note(relative)):
            return {"kind": "not_found", "path": relative}
        real, data = confinement.open_file(params["path"], max_bytes=limits.max_read_bytes)
        shown = confinement.relative(real)
        image = sniff_image(data[:65536])
        if image is not None:
            return _image(shown, real, data, image)
        if b"\x00" in data[:8192]:
            raise ToolError(
                f"File {relative!r} is binary ({len(data)} bytes), not text or a known image.",
                code="binary_file",
            )
        body = read_text(data.decode("utf-8", errors="replace"), _window(params, limits))
        return {"kind": "text", "path": shown, **body}

    return Tool(
        name="read",
        description=_DESCRIPTION,
        parameters=_READ_INPUT,
        output_schema=READ_OUTPUT,
        execute=execute,
        replay_safe=True,
    )
