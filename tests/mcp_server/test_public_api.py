"""The public surface of `clawcell.mcp_server` is deliberate."""

from __future__ import annotations

from clawcell import mcp_server


def test_all_is_pinned_sorted_and_exported() -> None:
    assert mcp_server.__all__ == ["ApprovalPolicy", "CodeModeServer", "serve_http"]
    assert all(hasattr(mcp_server, name) for name in mcp_server.__all__)
