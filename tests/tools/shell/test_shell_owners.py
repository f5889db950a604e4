"""Sessions own their commands, and text a process cannot take is refused before it starts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell.catalog import Catalog, call_session
from clawcell.errors import ToolError
from clawcell.tools import ShellSettings, shell

from .test_shell import run


async def _as(session_id: str, catalog: Catalog, name: str, args: dict[str, Any]) -> Any:
    async def call() -> Any:
        call_session.set(session_id)
        return await catalog.call(name, args)

    return await asyncio.create_task(call())


def test_one_session_cannot_list_read_write_or_kill_another_sessions_command(root: Path) -> None:
    tools = shell(root, settings=ShellSettings(approval="never", sandbox="off"))
    catalog = Catalog(tools)

    async def main() -> tuple[Any, list[Any], Any]:
        started = await _as("A", catalog, "exec", {"command": "cat", "background": True})
        sid = started["sessionId"]
        seen_by_b = [await _as("B", catalog, "process", {"action": "list"})]
        for action in ("poll", "log", "write", "kill", "remove"):
            args = {"action": action, "sessionId": sid, "data": "x"}
            seen_by_b.append(await _as("B", catalog, "process", args))
        return started, seen_by_b, await _as("A", catalog, "process", {"action": "list"})

    try:
        started, seen_by_b, seen_by_a = asyncio.run(main())
    finally:
        _close(tools)
    assert seen_by_b[0] == {"status": "completed", "sessions": []}
    missing = f"No session {started['sessionId']!r}"
    assert all(r["status"] == "failed" and r["error"].startswith(missing) for r in seen_by_b[1:])
    [mine] = seen_by_a["sessions"]
    assert (mine["sessionId"], mine["status"]) == (started["sessionId"], "running")


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("command", "echo a\x00b", "invalid_input"),
        ("command", "echo \ud800", "invalid_input"),
        ("input", "\udfff", "invalid_input"),
        ("workdir", "a\ud800", "invalid_input"),
        ("env", {"A": "\ud800"}, "invalid_env"),
    ],
)
def test_nul_and_lone_surrogates_are_invalid_input_and_nothing_is_left_running(
    root: Path, field: str, value: Any, code: str
) -> None:
    tools = shell(root, settings=ShellSettings(approval="never", sandbox="off", max_sessions=1))
    args = {"command": "sleep 60", "background": True, field: value}
    if field != "command":
        args["command"] = "echo ok"
    with pytest.raises(ToolError) as caught:
        run(tools, ("exec", args))
    assert caught.value.code == code
    # The one session slot is still free: nothing was started.
    [done] = run(tools, ("exec", {"command": "echo free"}))
    assert done["stdout"] == "free\n"


def test_process_write_of_a_lone_surrogate_is_a_failed_result(root: Path) -> None:
    tools = shell(root, settings=ShellSettings(approval="never", sandbox="off"))
    catalog = Catalog(tools)

    async def main() -> tuple[Any, Any]:
        sid = (await catalog.call("exec", {"command": "cat", "background": True}))["sessionId"]
        args = {"action": "write", "sessionId": sid, "data": "\ud800"}
        return await catalog.call("process", args), await catalog.call(
            "process", {"action": "poll", "sessionId": sid}
        )

    try:
        wrote, polled = asyncio.run(main())
    finally:
        _close(tools)
    assert wrote["status"] == "failed" and "lone surrogate" in wrote["error"]
    assert (polled["status"], polled["stdinWritable"]) == ("running", True)


def _close(tools: list[Tool]) -> None:
    for tool in tools:
        if tool.on_close is not None:
            tool.on_close()
