"""`clawcell mcp serve` over stdio, driven by the SDK's own client: tools listed with the
generated descriptions, cells run, and a parked cell survives the client restarting it."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from clawcell import CodeMode
from tests.cli.test_main import TOOLS
from tests.mcp._helpers import ROOT
from tests.mcp_server._serve import call, config_file, park_then_resume, stdio_client_of, text_of

KITCHEN = f"""
[mcp.servers.kitchen]
command = {str(sys.executable)!r}
args = ["-m", "tests.mcp.servers.kitchen"]
cwd = {str(ROOT)!r}

[mcp.servers.ghost]
command = "/nonexistent/mcp-server"
"""


def test_the_client_lists_exec_and_wait_with_the_generated_descriptions() -> None:
    async def main() -> list[tuple[str, str, list[str]]]:
        async with stdio_client_of(
            "--store", ":memory:", "--tools", "tests.cli.test_main:TOOLS"
        ) as c:
            listed = await c.list_tools()
        return [(t.name, t.description or "", t.input_schema["required"]) for t in listed.tools]

    expected = CodeMode(TOOLS).model_tools()
    assert anyio.run(main) == [
        (d["name"], d["description"], d["input_schema"]["required"]) for d in expected
    ]


def test_a_cell_calls_a_python_tool_through_the_server() -> None:
    async def main() -> dict[str, object]:
        async with stdio_client_of(
            "--store", ":memory:", "--tools", "tests.cli.test_main:TOOLS"
        ) as c:
            return await call(c, "exec", {"code": "text('hi'); return await double({ n: 4 });"})

    envelope = anyio.run(main)
    assert envelope["status"] == "completed"
    assert envelope["output"] == [{"type": "text", "text": "hi"}]
    assert envelope["value"] == {"twice": 8}


def test_a_rejected_call_and_a_failed_cell_are_tool_errors_with_their_messages() -> None:
    async def main() -> tuple[object, str, object, str]:
        async with stdio_client_of("--store", ":memory:") as c:
            unknown = await c.call_tool("wait", {"runId": "cm_nothing"})
            failed = await c.call_tool("exec", {"code": "throw new Error('boom')"})
        return unknown.is_error, text_of(unknown), failed.is_error, text_of(failed)

    unknown_error, unknown_text, failed_error, failed_text = anyio.run(main)
    assert (unknown_error, unknown_text) == (True, "code mode run is unavailable or expired.")
    assert failed_error is True
    assert '"status":"failed"' in failed_text and "boom" in failed_text


def test_the_exec_description_names_an_unavailable_server(tmp_path: Path) -> None:
    config = config_file(tmp_path, KITCHEN)

    async def main() -> str:
        async with stdio_client_of("--config", config, "--store", ":memory:") as c:
            listed = await c.list_tools()
        return listed.tools[0].description or ""

    text = anyio.run(main)
    assert "`MCP.ghost`, `MCP.kitchen`" in text
    assert "Unavailable right now (calls to them throw a catchable error): `MCP.ghost`: " in text


def test_a_parked_cell_survives_the_client_restarting_the_server(tmp_path: Path) -> None:
    config = config_file(tmp_path, KITCHEN)
    args = ("--config", config, "--store", str(tmp_path / "state.db"), "--session", "s1")
    code = """
    const before = (await MCP.kitchen.echo({ value: "before" })).structuredContent.input.value;
    await yield_control();
    const after = (await MCP.kitchen.echo({ value: "after" })).structuredContent.input.value;
    return [before, after];
    """

    parked, resumed = anyio.run(park_then_resume, code, *args)
    assert parked["status"] == "waiting"
    assert resumed["status"] == "completed", resumed
    assert resumed["value"] == ["before", "after"]


def test_a_tool_printing_to_stdout_does_not_corrupt_the_protocol() -> None:
    async def main() -> dict[str, object]:
        async with stdio_client_of(
            "--store", ":memory:", "--tools", "tests.mcp_server._serve:NOISY_TOOLS"
        ) as c:
            await call(c, "exec", {"code": "return await shout({ word: 'one' });"})
            return await call(c, "exec", {"code": "return await shout({ word: 'two' });"})

    assert anyio.run(main)["value"] == "TWO"
