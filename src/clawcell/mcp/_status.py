"""What is known about each configured MCP server: connected, failed (and why) or not tried.

`McpServers.status()` and `CodeMode.mcp_status()` report it; the `exec` description names the
failed servers so a model does not build on them.
"""

from __future__ import annotations

import logging
from typing import Final, Literal

from .._lazy import value_class

__all__ = ["LOGGER", "McpServerStatus", "ServerState"]

LOGGER: Final = logging.getLogger("clawcell.mcp")
"""Every MCP failure (a server that cannot be listed, a call that fails) is logged here."""

ServerState = Literal["pending", "connected", "failed"]


@value_class
class McpServerStatus:
    """The state of one configured MCP server.

    Attributes:
        identifier: The `MCP.<identifier>` name cells use for it.
        state: `pending` before the first cell (or `mcp_status()`) tried it, `connected`
            once its tools are listed, `failed` when it could not be listed.
        cause: Why it failed (the `McpError` message cells see), else `None`.
        tools: How many of its tools cells can call.
    """

    identifier: str
    state: ServerState
    cause: str | None = None
    tools: int = 0
