"""`McpServers`: the MCP servers of one `CodeMode`, connected lazily and closed with it.

The first cell that runs asks `prepare()` for the namespace: every server is connected and
listed then (concurrently). A server that cannot be listed keeps its `MCP.<server>` scope
without methods, so a cell that uses it gets a catchable `mcp_error` naming the cause; it is
tried again before the next cell. `status()` reports every server, each failure is logged on
the `clawcell.mcp` logger, and the `exec` description names the unavailable servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ..catalog import Catalog
from ..errors import McpError
from ._catalog import McpCatalog
from ._config import ServerConfig, check_servers
from ._connection import Connection
from ._names import allocate_identifiers
from ._namespace import McpNamespace
from ._sdk import require_sdk
from ._status import McpServerStatus
from ._types import McpListing

__all__ = ["McpServers"]


class McpServers:
    """Connections to the configured servers and the namespace built from their listings.

    Args:
        servers: Server name → configuration; the name is what the guest sees (normalized).
        catalog: The native catalog the namespace joins.

    Raises:
        ConfigurationError: A name or a configuration is not valid.
        McpError: The `mcp` SDK is not installed (`pip install 'clawcell[mcp]'`).
    """

    def __init__(self, servers: Mapping[str, ServerConfig], catalog: Catalog) -> None:
        servers = check_servers(servers)
        require_sdk()
        self._connections = {name: Connection(name, config) for name, config in servers.items()}
        self._identifiers = allocate_identifiers(self._connections, fallback="server")
        self._catalog = catalog
        self._listings: dict[str, McpListing] = {}
        self._failures: dict[str, str] = {}
        self.host_catalog = McpCatalog(catalog, McpNamespace([]), self._connections)
        self._closed = False

    async def prepare(self) -> bool:
        """List every server not listed yet; `True` when the guest's `MCP` tree changed."""
        missing = [c for name, c in self._connections.items() if name not in self._listings]
        if not missing or self._closed:
            return False
        before = self.install()
        outcomes = await asyncio.gather(*(c.listing() for c in missing), return_exceptions=True)
        for connection, outcome in zip(missing, outcomes, strict=True):
            if isinstance(outcome, McpListing):
                self._listings[connection.name] = outcome
                self._failures.pop(connection.name, None)
            elif isinstance(outcome, McpError):
                self._failures[connection.name] = outcome.message  # logged where raised
            else:
                raise outcome
        listings = [self._listings[n] for n in self._connections if n in self._listings]
        namespace = McpNamespace(listings, self._failures)
        self.host_catalog = McpCatalog(self._catalog, namespace, self._connections)
        return self.install() != before

    def status(self) -> dict[str, McpServerStatus]:
        """Server name → what is known about it (nothing is connected by asking)."""
        out: dict[str, McpServerStatus] = {}
        for name in self._connections:
            identifier = self._identifiers[name]
            if name in self._listings:
                tools = len({t.name for t in self._listings[name].tools})
                out[name] = McpServerStatus(identifier=identifier, state="connected", tools=tools)
            elif name in self._failures:
                out[name] = McpServerStatus(
                    identifier=identifier, state="failed", cause=self._failures[name]
                )
            else:
                out[name] = McpServerStatus(identifier=identifier, state="pending")
        return out

    def server_identifiers(self) -> list[str]:
        """The `MCP.<server>` names the guest sees, for every configured server."""
        return sorted(self._identifiers.values())

    def unavailable(self) -> dict[str, str]:
        """`MCP.<server>` identifier → why it failed, for the servers that could not be listed."""
        return {self._identifiers[name]: cause for name, cause in self._failures.items()}

    def install(self) -> dict[str, Any]:
        """The `mcp` tree of the guest install config."""
        return self.host_catalog.namespace.install()

    async def aclose(self) -> None:
        """Close every connection; idempotent."""
        if self._closed:
            return
        self._closed = True
        await asyncio.gather(*(c.aclose() for c in self._connections.values()))
