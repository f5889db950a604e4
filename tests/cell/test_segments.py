"""Where a cell's segments run (`_cell/_segments.py`): in loop-thread mode every turn runs
inline; a cancelled caller stops the guest's segment, even one that computes on a guest
thread. (A default-path turn begun on the loop thread: tests/runtime/test_crossing.py.)"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import _guest as guest_module  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime import run_on_guest_thread
from clawcell.runtime._crossing import TurnCrossing  # pyright: ignore[reportPrivateUsage]
from tests.conftest import run

SEQUENTIAL = "let n = 0;\nfor (let i = 0; i < 3; i++) n += (await echo({ i })).i;\nreturn n;"


async def _echo(params: dict[str, Any]) -> Any:
    return params


def test_in_loop_thread_mode_every_turn_runs_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    inline: list[str] = []
    sliced: list[str] = []
    original, original_sliced = guest_module.run_inline, guest_module.run_sliced

    def spy(*args: Any) -> Any:
        inline.append(threading.current_thread().name)
        return original(*args)

    def spy_sliced(*args: Any) -> Any:
        sliced.append(threading.current_thread().name)
        return original_sliced(*args)

    monkeypatch.setattr(guest_module, "run_inline", spy)
    monkeypatch.setattr(guest_module, "run_sliced", spy_sliced)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools, guest_thread=False) as mode:
            return (await mode.exec(SEQUENTIAL))["value"]

    assert run(main()) == 3
    assert sliced == []  # no turn begun as a call future
    assert inline == [threading.current_thread().name] * 3  # each turn whole, on this thread


def test_a_cancelled_leg_stops_a_crossing_that_spins_long_before_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crossing = threading.Event()  # set on the guest thread as the spinning crossing begins
    cross = TurnCrossing.cross

    def entering(self: TurnCrossing) -> None:
        crossing.set()
        cross(self)

    monkeypatch.setattr(TurnCrossing, "cross", entering)

    async def main() -> float:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools, limits=Limits(timeout_ms=60_000)) as mode:
            cell = asyncio.ensure_future(mode.exec("await echo({});\nwhile (true) {}"))
            assert await asyncio.to_thread(crossing.wait, 60)
            cell.cancel()
            started = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await cell
            # The guest thread is free again: a trivial job there finishes at once.
            for lane in range(8):
                await asyncio.wait_for(run_on_guest_thread(int, lane=lane), 30)
            return time.monotonic() - started

    # With the largest budget (60 s), a crossing nobody stopped would hold its lane's thread
    # for a minute; a stopped one frees it at the interrupt handler's next check. The 30 s
    # bound is a hang guard half the budget wide, not a timing check.
    assert run(main()) < 30
