"""`CodeModeServer` built without the `mcp` SDK."""

from __future__ import annotations

import asyncio
import sys

import pytest

from clawcell import CodeMode
from clawcell._lazy import install_hint
from clawcell.errors import McpError
from clawcell.mcp_server import CodeModeServer


def test_without_the_sdk_the_server_names_the_install_that_adds_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for module in ("mcp", "mcp.server"):  # as if the extra were not installed
        monkeypatch.setitem(sys.modules, module, None)

    async def build() -> None:
        async with CodeMode([]) as mode:
            CodeModeServer(mode)

    with pytest.raises(McpError) as caught:
        asyncio.run(build())
    assert caught.value.message == (
        f"`CodeModeServer` needs the `mcp` package: {install_hint('mcp')}."
    )
