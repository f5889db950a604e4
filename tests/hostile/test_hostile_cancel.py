"""Cancellation at random points: a seeded random cell (tool calls, timers, store writes,
saved results, output, parallel calls, computation) is cancelled after a seeded random
number of event-loop turns, in `exec` or in `wait`, in guest-thread and loop-thread mode.
Wherever it lands, the awaiting task sees `CancelledError` (or the cell had finished), no
tool call of it is left running, its store writes are dropped, its run cannot be waited on,
and a probe cell afterwards sees nothing of it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from clawcell import CodeMode, InputError, Limits, Tool
from tests.conftest import echo_tool, run
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
)

ROOMY = Limits(timeout_ms=60_000)
STEPS = [
    "await echo({ i: I });",
    "await nap({ i: I });",
    "await new Promise((r) => setTimeout(r, 0));",
    "await store('k' + I, I);",
    "await results.save({ i: I });",
    "text('step ' + I);",
    "console.log('log', I, { i: I });",
    "await Promise.all([echo({ a: I }), nap({ b: I }), echo({ c: I })]);",
    "{ let x = 0; for (let j = 0; j < 2e4; j++) x += j; }",
    "void nap({ forgotten: I });",
]


class Naps:
    """A tool that yields to the loop once, counting calls that end either way."""

    def __init__(self) -> None:
        self.started = 0
        self.ended = 0

    async def __call__(self, tool_input: dict[str, Any]) -> Any:
        self.started += 1
        try:
            await asyncio.sleep(0)
            return tool_input
        finally:
            self.ended += 1


def _program(seed: int) -> str:
    rng = random.Random(seed)
    lines = ["globalThis.__leak = 1;"]
    for i in range(rng.randrange(4, 14)):
        lines.append(rng.choice(STEPS).replace("I", str(i)))
    return "\n".join([*lines, "return 'finished';"])


async def _turns(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def _cancel_after(task: asyncio.Task[Any], turns: int) -> str:
    """Cancel `task` after `turns` loop turns: `cancelled`, or `finished` if it beat us."""
    await _turns(turns)
    task.cancel()
    try:
        envelope = await task
    except asyncio.CancelledError:
        return "cancelled"
    assert envelope["status"] in {"completed", "waiting"}, envelope
    return "finished"


def _tools(naps: Naps) -> list[Tool]:
    return [echo_tool(), Tool(name="nap", execute=naps)]


async def _stored_keys(mode: CodeMode) -> list[str]:
    envelope = await mode.exec(
        "const seen = [];\nfor (let i = 0; i < 14; i++) if ((await load('k' + i)) !== undefined)"
        " seen.push('k' + i);\nreturn seen;"
    )
    return envelope["value"]


EXEC_SEEDS = range(32)


@pytest.mark.parametrize("seed", EXEC_SEEDS)
def test_cancelling_exec_at_a_random_point_leaves_the_runtime_clean(seed: int) -> None:
    naps = Naps()
    turns = random.Random(seed).randrange(0, 120)

    async def main() -> list[Any]:
        async with CodeMode(_tools(naps), limits=ROOMY, guest_thread=seed % 2 == 0) as mode:
            before = await _probe(mode)
            task = asyncio.ensure_future(mode.exec(_program(seed)))
            ending = await _cancel_after(task, turns)
            keys = await _stored_keys(mode)
            clean = before == await _probe(mode)
            return [ending, keys, clean, naps.started == naps.ended]

    ending, keys, clean, settled = run(main())
    assert ending in {"cancelled", "finished"}
    if ending == "cancelled":
        assert keys == []  # a cancelled cell's writes are dropped
    assert clean is True
    assert settled is True


WAIT_SEEDS = range(16)


@pytest.mark.parametrize("seed", WAIT_SEEDS)
def test_cancelling_wait_at_a_random_point_leaves_the_runtime_clean(seed: int) -> None:
    naps = Naps()
    turns = random.Random(seed).randrange(0, 120)
    code = "await echo({ before: 1 });\nawait yield_control('pause');\n" + _program(seed)

    async def main() -> list[Any]:
        async with CodeMode(_tools(naps), limits=ROOMY, guest_thread=seed % 2 == 1) as mode:
            before = await _probe(mode)
            parked = await mode.exec(code)
            assert parked["status"] == "waiting", parked
            task = asyncio.ensure_future(mode.wait(parked["runId"]))
            ending = await _cancel_after(task, turns)
            refused = False
            if ending == "cancelled":
                with pytest.raises(InputError):
                    await mode.wait(parked["runId"])
                refused = True
            keys = await _stored_keys(mode)
            return [ending, refused, keys, before == await _probe(mode), naps.started == naps.ended]

    ending, refused, keys, clean, settled = run(main())
    assert ending in {"cancelled", "finished"}
    if ending == "cancelled":
        assert (refused, keys) == (True, [])
    assert clean is True
    assert settled is True


@pytest.mark.parametrize("seed", range(8))
def test_a_timeout_around_exec_cancels_it_cleanly(seed: int) -> None:
    # `asyncio.timeout` cancels from the loop's own timer; the cell below never finishes,
    # so the outer timeout (not the cell's budget) ends it at a random point of its work.
    naps = Naps()
    code = _program(seed).replace("return 'finished';", "for (let n = 0; ; n++) await echo({ n });")

    async def main() -> list[Any]:
        async with CodeMode(_tools(naps), limits=ROOMY, guest_thread=seed % 2 == 0) as mode:
            before = await _probe(mode)
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05 + seed / 100):
                    await mode.exec(code)
            return [
                await _stored_keys(mode),
                before == await _probe(mode),
                naps.started == naps.ended,
            ]

    assert run(main()) == [[], True, True]
