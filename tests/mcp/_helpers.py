"""Shared helpers: server configurations for the test servers and a cell runner."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.mcp import ServerConfig, StdioServer

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def kitchen(**policy: Any) -> StdioServer:
    """The SDK test server over stdio."""
    return StdioServer(
        command=sys.executable, args=["-m", "tests.mcp.servers.kitchen"], cwd=str(ROOT), **policy
    )


def broken() -> StdioServer:
    """The hand-written server whose results are malformed."""
    return StdioServer(
        command=sys.executable, args=["-m", "tests.mcp.servers.broken"], cwd=str(ROOT)
    )


def run_cells(servers: Mapping[str, ServerConfig], *codes: str) -> list[dict[str, Any]]:
    """Run each cell in order in one `CodeMode`; return their envelopes."""

    async def main() -> list[dict[str, Any]]:
        limits = Limits(timeout_ms=20_000)
        async with CodeMode(mcp_servers=servers, limits=limits) as mode:
            return [await mode.exec(code) for code in codes]

    return asyncio.run(main())


def value(envelope: dict[str, Any]) -> Any:
    """The value of a completed envelope (fails the test otherwise)."""
    assert envelope["status"] == "completed", envelope
    return envelope["value"]
