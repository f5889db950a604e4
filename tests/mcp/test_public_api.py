"""The public surface of `clawcell.mcp` is deliberate."""

from __future__ import annotations

from clawcell import mcp


def test_all_is_pinned_sorted_and_exported() -> None:
    assert mcp.__all__ == [
        "HttpServer",
        "McpAppView",
        "McpServerStatus",
        "McpServers",
        "ServerConfig",
        "ServerState",
        "StdioServer",
        "check_servers",
        "expand_env",
        "load_servers",
        "mcp_app_sink",
        "parse_servers",
    ]
    assert all(hasattr(mcp, name) for name in mcp.__all__)
