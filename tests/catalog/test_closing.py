"""`close_tools`: the one path that releases what tools own, sync or async, never raising."""

from __future__ import annotations

import asyncio
import logging

import pytest

from clawcell import CodeMode, Tool
from clawcell.catalog import close_tools


async def _echo(arguments: dict[str, object]) -> dict[str, object]:
    return arguments


def test_sync_and_async_closers_both_run_and_a_failing_one_does_not_stop_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    closed: list[str] = []

    async def async_close() -> None:
        closed.append("async")

    def broken() -> None:
        raise RuntimeError("boom")

    tools = [
        Tool(name="first", execute=_echo, on_close=lambda: closed.append("sync")),
        Tool(name="broken", execute=_echo, on_close=broken),
        Tool(name="plain", execute=_echo),
        Tool(name="last", execute=_echo, on_close=async_close),
    ]
    with caplog.at_level(logging.ERROR, logger="clawcell.catalog"):
        asyncio.run(close_tools(tools))
    assert closed == ["sync", "async"]
    assert "'broken'" in caplog.text


def test_closing_a_code_mode_awaits_an_async_on_close() -> None:
    closed: list[str] = []

    async def release() -> None:
        closed.append("released")

    async def main() -> str:
        mode = CodeMode(tools=[Tool(name="held", execute=_echo, on_close=release)])
        result = await mode.exec("return await held({a: 1})")
        await mode.aclose()
        return str(result["status"])

    assert asyncio.run(main()) == "completed"
    assert closed == ["released"]
