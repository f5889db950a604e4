"""The bridge's one place that imports the `mcp` SDK; it is optional (`pip install
'clawcell[mcp]'`). The server face, `clawcell.mcp_server`, imports the SDK's server side
itself."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

from .._lazy import install_hint
from ..errors import McpError
from ._config import HttpServer, ServerConfig
from ._executable import resolve_command

__all__ = [
    "MISSING_SDK",
    "is_connection_closed",
    "is_protocol_error",
    "open_client",
    "require_sdk",
]

MISSING_SDK = (
    "The MCP bridge needs the `mcp` package, which is not installed; "
    f"install it with {install_hint('mcp')}."
)


def require_sdk() -> None:
    """Fail now, with the install command, when the SDK is missing (without importing it).

    Raises:
        McpError: `mcp` cannot be imported.
    """
    if "mcp" in sys.modules:
        loaded = cast(object, sys.modules["mcp"])
        if loaded is None:  # an import of it was blocked
            raise McpError(MISSING_SDK)
        return
    if importlib.util.find_spec("mcp") is None:
        raise McpError(MISSING_SDK)


def _sdk() -> Any:
    try:
        import mcp
    except ImportError as exc:
        raise McpError(MISSING_SDK) from exc
    return mcp


Cleanup = Callable[[], Awaitable[None]]


def open_client(config: ServerConfig) -> tuple[AbstractAsyncContextManager[Any], Cleanup]:
    """An un-entered SDK `Client` for `config`, and what to release after it has exited.

    Caching is off: a listing must reflect the server as it is now.
    """
    mcp = _sdk()
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if isinstance(config, HttpServer):
        _check_headers(config.headers)
        http = create_mcp_http_client(headers=dict(config.headers))
        transport = streamable_http_client(config.url, http_client=http)
        return mcp.Client(transport, cache=None), http.aclose
    params = StdioServerParameters(
        command=resolve_command(config.command, config.env),
        args=list(config.args),
        env=None if config.env is None else dict(config.env),
        cwd=config.cwd,
    )
    # Server stderr is not ours to show; it must not reach the host's own streams.
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 -- closed with the connection

    async def close_sink() -> None:
        sink.close()

    return mcp.Client(stdio_client(params, errlog=sink), cache=None), close_sink


def _check_headers(headers: Mapping[str, str]) -> None:
    """HTTP sends header names and values as ASCII; say which one is not, and where."""
    for name, value in headers.items():
        for part, text in (("name", name), ("value", value)):
            bad = next((i for i, c in enumerate(text) if not " " <= c <= "~" and c != "\t"), None)
            if bad is not None:
                raise McpError(
                    f"the {part} of header {name!r} holds {text[bad]!r} at position {bad}, "
                    "and HTTP headers must be printable ASCII (replace a placeholder such as "
                    "`Bearer …` with the real value, or use `${env:NAME}`)"
                )


def is_protocol_error(exc: BaseException) -> bool:
    """A JSON-RPC error answered by a live server (the connection stays usable)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED


def is_connection_closed(exc: BaseException) -> bool:
    """The SDK's report that the transport closed under a pending request."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED
