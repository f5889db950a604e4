"""The guest projection of MCP results (spec §9.2).

Tools give `{content, structuredContent?, isError}` with the original content blocks (their
annotations and block-level `_meta` included); resources and prompts keep their native shapes.
The top-level `_meta` of a result never reaches the guest.
"""

from __future__ import annotations

from typing import Any

from ..errors import McpError
from ._types import McpResult

__all__ = ["guest_projection"]

_MISSING = "MCP namespace tool result is missing its owned guest projection."
# Each operation's owned list field, then its optional fields, in the order they are shown.
# Protocol bookkeeping (`resultType`, `ttlMs`, `cacheScope`, top-level `_meta`) is dropped.
_NATIVE: dict[str, tuple[str, tuple[str, ...]]] = {
    "resources/list": ("resources", ("nextCursor",)),
    "resources/read": ("contents", ()),
    "prompts/list": ("prompts", ("nextCursor",)),
    "prompts/get": ("messages", ("description",)),
}


def guest_projection(result: McpResult) -> dict[str, Any]:
    """What `await MCP.<server>.<method>(...)` resolves to.

    Raises:
        McpError: the result lacks the fields its operation owns.
    """
    data = dict(result.data)
    data.pop("_meta", None)
    if result.operation == "tools/call":
        content = data.get("content")
        if not isinstance(content, list):
            raise McpError(_MISSING)
        projected: dict[str, Any] = {"content": content}
        if "structuredContent" in data:
            projected["structuredContent"] = data["structuredContent"]
        projected["isError"] = data.get("isError") is True
        return projected
    owned, optional = _NATIVE[result.operation]
    if not isinstance(data.get(owned), list):
        raise McpError(_MISSING)
    native: dict[str, Any] = {k: data[k] for k in optional if k == "description" and k in data}
    native[owned] = data[owned]
    native.update({k: data[k] for k in optional if k != "description" and k in data})
    return native
