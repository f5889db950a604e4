"""Server configurations: how clawcell reaches one MCP server.

The dict key given to `CodeMode(mcp_servers=...)` is the server name; these values say how to
connect, which tools the guest may see (`allow`, `deny`) and which calls wait for a person's
approval (`ask`, glob patterns of tool names).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, TypeAlias

from .._lazy import value_class
from ..errors import ConfigurationError

__all__ = ["HttpServer", "ServerConfig", "StdioServer", "check_servers"]


def _check_policy(kind: str, policy: _Policy) -> None:
    allow, ask = policy.allow, policy.ask
    if isinstance(allow, str):
        raise ConfigurationError(f"{kind}: `allow` must be a list of tool names, got {allow!r}.")
    if isinstance(ask, str) or not all(isinstance(p, str) and p for p in ask):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ConfigurationError(
            f'{kind}: `ask` must be a list of tool names or glob patterns (`["*"]` for every '
            f"tool), got {ask!r}."
        )
    for name in ("timeout", "connect_timeout"):
        seconds = getattr(policy, name)
        if not seconds > 0:
            raise ConfigurationError(
                f"{kind}: `{name}` must be a positive number, got {seconds!r}."
            )


@value_class
class _Policy:
    allow: Sequence[str] | None = None
    """Only these MCP tool names are visible (`None`: all)."""
    deny: Sequence[str] = ()
    """These MCP tool names are absent everywhere: namespace, search, declarations."""
    ask: Sequence[str] = ()
    """Glob patterns (`git_*`, `*`) of MCP tool names whose calls wait for approval."""
    timeout: float = 30.0
    """Seconds one request may take before the connection is reset."""
    connect_timeout: float = 30.0
    """Seconds starting (or reaching) the server and its MCP handshake may take."""

    def visible(self, tool_name: str) -> bool:
        """Whether a tool passes the allow/deny policy."""
        if tool_name in self.deny:
            return False
        return self.allow is None or tool_name in self.allow

    def asks(self, tool_name: str) -> bool:
        """Whether calls of this MCP tool wait for a person's approval."""
        return any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in self.ask)


@value_class
class StdioServer(_Policy):
    """A server started as a subprocess and spoken to over its stdin/stdout.

    Attributes:
        command: The executable, e.g. `"mcp-server-time"`.
        args: Its arguments.
        env: Extra environment variables (merged over the SDK's safe default environment).
        cwd: Its working directory.
        allow: Only these tool names are visible (`None`: all).
        deny: These tool names are absent everywhere.
        ask: Glob patterns of tool names whose calls wait for a person's approval
            (`["*"]`: every tool of this server); see `docs/approvals.md`.
        timeout: Seconds one request may take before the connection is reset.
        connect_timeout: Seconds starting the server and its MCP handshake may take (a
            subprocess that imports a large SDK can need seconds on a loaded machine).
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def __post_init__(self) -> None:
        if not self.command:
            raise ConfigurationError("StdioServer: `command` must be a non-empty string.")
        if isinstance(self.args, str):
            raise ConfigurationError(f"StdioServer: `args` must be a list, got {self.args!r}.")
        _check_policy("StdioServer", self)


@value_class
class HttpServer(_Policy):
    """A server reached over streamable HTTP.

    Attributes:
        url: The MCP endpoint, e.g. `"http://127.0.0.1:8931/mcp"`.
        headers: Extra HTTP headers (for example `Authorization`).
        allow: Only these tool names are visible (`None`: all).
        deny: These tool names are absent everywhere.
        ask: Glob patterns of tool names whose calls wait for a person's approval
            (`["*"]`: every tool of this server); see `docs/approvals.md`.
        timeout: Seconds one request may take before the connection is reset.
        connect_timeout: Seconds reaching the server and its MCP handshake may take.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ConfigurationError(f"HttpServer: `url` must be an http(s) URL, got {self.url!r}.")
        _check_policy("HttpServer", self)


ServerConfig: TypeAlias = StdioServer | HttpServer


def check_servers(servers: Mapping[Any, object]) -> dict[str, ServerConfig]:
    """`servers` as a dict, each name a non-empty string and each value a server configuration.

    Raises:
        ConfigurationError: naming the first bad name or value.
    """
    checked: dict[str, ServerConfig] = {}
    for name, config in servers.items():
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"MCP server names must be non-empty strings, got {name!r}.")
        if not isinstance(config, StdioServer | HttpServer):
            raise ConfigurationError(
                f"MCP server {name!r} must be a `clawcell.mcp.StdioServer` or "
                f"`clawcell.mcp.HttpServer`, got {config!r}."
            )
        checked[name] = config
    return checked
