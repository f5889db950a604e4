"""Servers that crash mid-call, hang or answer malformed: the cell gets a catchable error,
the host stays up and the next call reconnects."""

from __future__ import annotations

from ._helpers import broken, kitchen, run_cells, value

CATCH = """
try { return await %s; } catch (error) { return { message: error.message, code: error.code }; }
"""


def test_a_crash_mid_call_is_catchable_and_the_next_call_reconnects() -> None:
    crashed, after = run_cells(
        {"kitchen": kitchen()},
        CATCH % "MCP.kitchen.crash()",
        "return (await MCP.kitchen.echo({ value: 'again' })).structuredContent;",
    )
    assert value(crashed) == {
        "message": "MCP server `kitchen` closed the connection during `tools/call`; "
        "the next call reconnects.",
        "code": "mcp_error",
    }
    assert value(after) == {"toolName": "echo", "input": {"value": "again"}}


def test_a_hanging_call_times_out_and_the_next_call_reconnects() -> None:
    hung, after = run_cells(
        {"kitchen": kitchen(timeout=2.0)},
        CATCH % "MCP.kitchen.hang()",
        "return (await MCP.kitchen.echo({})).isError;",
    )
    assert value(hung) == {
        "message": "MCP server `kitchen` did not answer `tools/call` within 2s; "
        "the connection was reset and the next call reconnects.",
        "code": "mcp_error",
    }
    assert value(after) is False


def test_a_malformed_result_is_a_catchable_error_and_the_host_stays_up() -> None:
    first, second = run_cells(
        {"broken": broken()}, CATCH % "MCP.broken.bad()", CATCH % "MCP.broken.bad()"
    )
    for envelope in (first, second):
        got = value(envelope)
        assert got["code"] == "mcp_error"
        assert got["message"].startswith("MCP server `broken` failed during `tools/call`: ")


def test_an_uncaught_mcp_error_fails_the_cell_not_the_host() -> None:
    failed, after = run_cells(
        {"kitchen": kitchen()}, "return await MCP.kitchen.crash();", "return 'still here';"
    )
    assert failed["status"] == "failed"
    assert "closed the connection during `tools/call`" in failed["error"]
    assert value(after) == "still here"


def test_a_server_that_cannot_start_is_absent_and_named_in_problems() -> None:
    import asyncio

    from clawcell import CodeMode
    from clawcell.mcp import StdioServer

    async def main() -> tuple[object, dict[str, str]]:
        servers = {"ghost": StdioServer(command="/nonexistent/mcp-server", timeout=5.0)}
        async with CodeMode(mcp_servers=servers) as mode:
            envelope = await mode.exec("return [typeof MCP, Object.keys(namespaces)];")
            assert mode._host.mcp is not None  # pyright: ignore[reportPrivateUsage]
            return value(envelope), mode._host.mcp.problems  # pyright: ignore[reportPrivateUsage]

    got, problems = asyncio.run(main())
    assert got == ["undefined", []]
    assert problems["ghost"].startswith("MCP server `ghost` could not be started or reached: ")
