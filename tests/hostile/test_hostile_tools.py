"""Tools that misbehave on the host side: the cell gets a tool failure, never wedges (D7)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from tests.conftest import run


async def _raises_cancelled(_: dict[str, Any]) -> Any:
    raise asyncio.CancelledError("the tool gave up")


async def _raises_bare_cancelled(_: dict[str, Any]) -> Any:
    await asyncio.sleep(0)
    raise asyncio.CancelledError


async def _cancels_itself(_: dict[str, Any]) -> Any:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    await asyncio.sleep(0)
    return "unreachable"


CANCELLING = {
    "raises_cancelled_error": (_raises_cancelled, "the tool gave up"),
    "raises_bare_cancelled_error": (_raises_bare_cancelled, "tool call was cancelled"),
    "cancels_its_own_task": (_cancels_itself, "tool call was cancelled"),
}
CAUGHT = (
    "try { await bad({}); return 'no error'; }\n"
    "catch (e) { return [e.message, e.code, e.effectStatus, await good({ n: 1 })]; }"
)


@pytest.mark.parametrize(
    ("execute", "message"), [pytest.param(*v, id=k) for k, v in CANCELLING.items()]
)
def test_a_tool_ending_cancelled_is_a_tool_failure_and_the_cell_goes_on(
    execute: Any, message: str
) -> None:
    async def good(tool_input: dict[str, Any]) -> Any:
        return tool_input

    async def main() -> list[dict[str, Any]]:
        tools = [Tool(name="bad", execute=execute), Tool(name="good", execute=good)]
        async with CodeMode(tools, limits=Limits(timeout_ms=60_000)) as mode:
            return [await mode.exec(CAUGHT), await mode.exec("return await good({ n: 2 });")]

    first, after = run(main())
    assert first["status"] == "completed", first
    assert first["value"] == [message, "tool_error", "unknown", {"n": 1}]
    assert after["value"] == {"n": 2}
