"""MCP failures explain themselves: `mcp_status()`, a log record, a catchable error naming
the server and the cause, the `exec` description, and the missing-extra `McpError`."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

from clawcell import CodeMode, McpError
from clawcell.mcp import HttpServer, McpServerStatus, ServerConfig, StdioServer
from tests._sockets import refusing_port

from ._helpers import kitchen, value

GHOST_CAUSE = (
    "MCP server `ghost` could not be started or reached: [Errno 2] No such file or directory: "
    "'/nonexistent/mcp-server'. Check its configuration; the next call retries."
)
CATCH = """
try { await %s; return "no error"; }
catch (error) { return { message: error.message, code: error.code }; }
"""


def _ghost() -> StdioServer:
    return StdioServer(command="/nonexistent/mcp-server", timeout=5.0)


async def _session(
    servers: dict[str, ServerConfig], *codes: str
) -> tuple[dict[str, McpServerStatus], list[dict[str, Any]], str]:
    async with CodeMode(mcp_servers=servers) as mode:
        status = await mode.mcp_status()
        envelopes = [await mode.exec(code) for code in codes]
        description = mode.model_tools()[0]["description"]
    return status, envelopes, description


def test_status_is_pending_until_asked_then_connected_with_a_tool_count() -> None:
    async def main() -> tuple[object, object]:
        async with CodeMode(mcp_servers={"kitchen": kitchen()}) as mode:
            assert mode._host.mcp is not None  # pyright: ignore[reportPrivateUsage]
            before = mode._host.mcp.status()  # pyright: ignore[reportPrivateUsage]
            return before, await mode.mcp_status()

    before, after = asyncio.run(main())
    assert before == {"kitchen": McpServerStatus(identifier="kitchen", state="pending")}
    assert after == {"kitchen": McpServerStatus(identifier="kitchen", state="connected", tools=15)}


def test_a_server_that_cannot_start_is_failed_with_its_cause_and_cells_can_catch_it() -> None:
    status, envelopes, _ = asyncio.run(
        _session(
            {"ghost": _ghost()},
            "return [typeof MCP, Object.keys(MCP), MCP.ghost.$serverName];",
            CATCH % "MCP.ghost.listFiles({})",
            CATCH % "MCP.ghost.$api()",
        )
    )
    assert status == {
        "ghost": McpServerStatus(identifier="ghost", state="failed", cause=GHOST_CAUSE)
    }
    shape, call, api = (value(e) for e in envelopes)
    assert shape == ["object", ["ghost", "$api"], "ghost"]
    assert call == {"message": GHOST_CAUSE, "code": "mcp_error"}
    assert api == {"message": GHOST_CAUSE, "code": "mcp_error"}


def test_the_exec_description_names_the_unavailable_servers_and_why() -> None:
    _, _, description = asyncio.run(
        _session({"ghost": _ghost(), "kitchen": kitchen()}, "return 1;")
    )
    assert "`MCP.ghost`, `MCP.kitchen`" in description
    assert (
        "Unavailable right now (calls to them throw a catchable error): "
        f"`MCP.ghost`: {GHOST_CAUSE}. Do not build on these servers in this program."
    ) in description


def test_a_failed_server_does_not_hide_a_working_one() -> None:
    _, (envelope,), _ = asyncio.run(
        _session(
            {"ghost": _ghost(), "kitchen": kitchen()},
            "return (await MCP.kitchen.echo({ value: 'up' })).structuredContent;",
        )
    )
    assert value(envelope) == {"toolName": "echo", "input": {"value": "up"}}


def test_each_failed_attempt_is_logged_on_the_clawcell_mcp_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="clawcell.mcp"):
        asyncio.run(_session({"ghost": _ghost()}, "return 1;"))
    records = [r for r in caplog.records if r.name == "clawcell.mcp"]
    # One attempt for `mcp_status()`, one retry before the cell.
    assert [r.getMessage() for r in records] == [GHOST_CAUSE, GHOST_CAUSE]
    assert records[0].levelno == logging.WARNING


def test_an_http_server_that_is_not_listening_names_the_connect_error_not_a_task_group() -> None:
    with refusing_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        status, (envelope,), _ = asyncio.run(
            _session({"docs": HttpServer(url=url, timeout=10.0)}, CATCH % "MCP.docs.search({})")
        )
    cause = status["docs"].cause
    assert cause == (
        "MCP server `docs` could not be started or reached: All connection attempts failed. "
        "Check its configuration; the next call retries."
    )
    assert value(envelope) == {"message": cause, "code": "mcp_error"}


def test_missing_required_arguments_carry_the_mcp_error_code() -> None:
    _, (envelope,), _ = asyncio.run(
        _session({"kitchen": kitchen()}, CATCH % "MCP.kitchen.needsArgs({ c: true })")
    )
    assert value(envelope) == {
        "message": "Missing required MCP namespace arguments: a, b",
        "code": "mcp_error",
    }


def test_a_missing_mcp_extra_raises_the_documented_mcp_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(McpError) as caught:
        CodeMode(mcp_servers={"ghost": _ghost()})
    assert caught.value.message == (
        "The MCP bridge needs the `mcp` package, which is not installed; "
        "install it with `pip install 'clawcell[mcp]'` (in a clawcell checkout: "
        "`.venv/bin/pip install -e '.[mcp]'`)."
    )
    assert caught.value.code == "mcp_error"
