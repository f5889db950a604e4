"""Where a cell's segments run (`_cell/_segments.py`): on the default path a turn sends only
its crossing to the guest thread and does the rest of its Python on the loop thread; in
loop-thread mode everything runs inline; a cancelled caller stops the guest's segment."""

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


def _where_turns_ran(monkeypatch: pytest.MonkeyPatch, *, guest_thread: bool) -> list[str]:
    seen: list[str] = []
    for name in ("cross", "finish"):
        original = getattr(TurnCrossing, name)

        def spy(self: TurnCrossing, original: Any = original, name: str = name) -> Any:
            seen.append(f"{name}@{threading.current_thread().name}")
            return original(self)

        monkeypatch.setattr(TurnCrossing, name, spy)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools, guest_thread=guest_thread) as mode:
            return (await mode.exec(SEQUENTIAL))["value"]

    assert run(main()) == 3
    return seen


def test_on_the_default_path_only_the_crossing_runs_on_the_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _where_turns_ran(monkeypatch, guest_thread=True)
    loop_thread = threading.current_thread().name  # `run` drives the loop on this thread
    assert len(seen) == 6  # three turns after the first segment, each crossed and finished
    assert {s.split("@")[1] for s in seen[0::2]} <= {f"clawcell-guest-{n}" for n in range(64)}
    assert {s for s in seen[1::2]} == {f"finish@{loop_thread}"}


def test_in_loop_thread_mode_every_turn_runs_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    inline: list[str] = []
    original = guest_module.run_inline

    def spy(*args: Any) -> Any:
        inline.append(threading.current_thread().name)
        return original(*args)

    monkeypatch.setattr(guest_module, "run_inline", spy)
    seen = _where_turns_ran(monkeypatch, guest_thread=False)
    assert seen == []  # no turn split at its crossing
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
