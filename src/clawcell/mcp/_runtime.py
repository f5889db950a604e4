"""`McpServers`: the configured servers of one `CodeMode`, connected lazily and closed with it.

The first cell that runs asks `prepare()` for the namespace: every server is connected and
listed then (concurrently). A server that cannot be listed is left out of that namespace and
tried again before the next cell; its absence is reported by `problems`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ..catalog import Catalog
from ..errors import ConfigurationError, McpError
from ._catalog import McpCatalog
from ._config import HttpServer, ServerConfig, StdioServer
from ._connection import Connection
from ._names import allocate_identifiers
from ._namespace import McpNamespace
from ._types import McpListing

__all__ = ["McpServers"]


class McpServers:
    """Connections to the configured servers and the namespace built from their listings.

    Args:
        servers: Server name → configuration; the name is what the guest sees (normalized).
        catalog: The native catalog the namespace joins.
    """

    def __init__(self, servers: Mapping[str, ServerConfig], catalog: Catalog) -> None:
        for name, config in servers.items():
            if not isinstance(name, str) or not name:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ConfigurationError(
                    f"MCP server names must be non-empty strings, got {name!r}."
                )
            if not isinstance(config, StdioServer | HttpServer):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ConfigurationError(
                    f"MCP server {name!r} must be a `clawcell.mcp.StdioServer` or "
                    f"`clawcell.mcp.HttpServer`, got {config!r}."
                )
        self._connections = {name: Connection(name, config) for name, config in servers.items()}
        self._catalog = catalog
        self._listings: dict[str, McpListing] = {}
        self.problems: dict[str, str] = {}
        """Server name → why it is missing from the namespace."""
        self.host_catalog = McpCatalog(catalog, McpNamespace([]), self._connections)
        self._closed = False

    async def prepare(self) -> bool:
        """List every server not listed yet; `True` when the namespace changed."""
        missing = [c for name, c in self._connections.items() if name not in self._listings]
        if not missing or self._closed:
            return False
        outcomes = await asyncio.gather(*(c.listing() for c in missing), return_exceptions=True)
        changed = False
        for connection, outcome in zip(missing, outcomes, strict=True):
            if isinstance(outcome, McpListing):
                self._listings[connection.name] = outcome
                self.problems.pop(connection.name, None)
                changed = True
            elif isinstance(outcome, McpError):
                self.problems[connection.name] = outcome.message
            else:
                raise outcome
        if changed:
            listings = [self._listings[n] for n in self._connections if n in self._listings]
            self.host_catalog = McpCatalog(self._catalog, McpNamespace(listings), self._connections)
        return changed

    def server_identifiers(self) -> list[str]:
        """The `MCP.<server>` names the guest sees, for every configured server."""
        ids = allocate_identifiers(self._connections, fallback="server")
        return sorted(ids.values())

    def install(self) -> dict[str, Any]:
        """The `mcp` tree of the guest install config."""
        return self.host_catalog.namespace.install()

    async def aclose(self) -> None:
        """Close every connection; idempotent."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(c.aclose() for c in self._connections.values()))
