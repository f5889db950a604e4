"""A run across legs (`_runs/_lifecycle.py`): output across `yield` and `wait`, one `wait` at
a time, parked-run expiry and limits, concurrent cells, cancellation and closing."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clawcell import ClosedError, CodeMode, InputError, Limits, Tool
from tests.conftest import ROOMY, echo_tool, failure, in_fresh_interpreter, run, with_mode
from tests.runs._durable_modes import durable


def test_output_is_delivered_incrementally_across_yield_and_wait() -> None:
    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        first = await mode.exec(
            "text('a');\nconst r = await yield_control('check');\ntext('b');\nreturn r;"
        )
        return [first, await mode.wait(first["runId"])]

    first, second = with_mode(body)
    assert first["status"] == "waiting"
    assert re.fullmatch(r"cm_[0-9a-f-]{36}", first["runId"])
    assert (first["reason"], first["pendingToolCalls"]) == (
        "yield",
        [{"id": "bridge:yield:1", "method": "yield"}],
    )
    assert first["output"] == [{"type": "text", "text": "a"}]
    assert second["status"] == "completed"
    assert second["output"] == [{"type": "text", "text": "b"}]
    assert second["value"] == {"status": "yielded", "reason": "check"}


def test_a_finished_run_cannot_be_waited_on_again() -> None:
    async def body(mode: CodeMode) -> str:
        first = await mode.exec("await yield_control();\nreturn 1;")
        assert (await mode.wait(first["runId"]))["value"] == 1
        with pytest.raises(InputError) as caught:
            await mode.wait(first["runId"])
        return caught.value.message

    assert with_mode(body) == "code mode run is unavailable or expired."


@pytest.mark.parametrize("durable_store", [False, True], ids=["memory", "sqlite"])
def test_a_second_wait_while_one_is_in_flight_is_refused(
    tmp_path: Path, durable_store: bool
) -> None:
    gate = asyncio.Event()

    async def slow(_: dict[str, Any]) -> Any:
        await gate.wait()
        return "done"

    async def main() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        tools, limits = [Tool(name="slow", execute=slow)], Limits(timeout_ms=200)
        if durable_store:  # the run is also claimed in the store: still one `wait` at a time
            mode = durable(tmp_path / "s.sqlite", tools, limits=limits)
        else:
            mode = CodeMode(tools, limits=limits)
        async with mode:
            parked = await mode.exec("return await slow();")
            assert parked["status"] == "waiting"
            first = asyncio.ensure_future(mode.wait(parked["runId"]))
            await asyncio.sleep(0)  # let the first wait start; no time passes
            second = await mode.call_tool("wait", {"runId": parked["runId"]})
            gate.set()
            return parked, await asyncio.wait_for(first, 60), second

    parked, first, second = run(main())
    assert parked["reason"] == "pending_tools"
    assert parked["pendingToolCalls"] == [{"id": "bridge:callValue:1", "method": "callValue"}]
    assert failure(second) == (
        "invalid_input",
        "input",
        "code mode run is already being resumed.",
        False,
    )
    assert first["value"] == "done"


def test_parked_runs_expire_after_their_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    clock["monotonic"] = clock["time"] = lambda: now[0]
    # Expiry is read in whichever module keeps the parked runs; each sees the fake clock.
    for name in ("clawcell._runs._lifecycle", "clawcell._runs._parked", "clawcell._runs._revive"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "time"):
            monkeypatch.setattr(module, "time", SimpleNamespace(**clock))

    async def body(mode: CodeMode) -> list[Any]:
        kept = await mode.exec("await yield_control();\nreturn 'kept';")
        lost = await mode.exec("await yield_control();\nreturn 'lost';")
        now[0] += 4.5
        kept_value = (await mode.wait(kept["runId"]))["value"]
        now[0] += 0.6  # `lost` has been idle for 5.1 s
        with pytest.raises(InputError) as caught:
            await mode.wait(lost["runId"])
        return [kept_value, caught.value.message]

    limits = Limits(timeout_ms=250, snapshot_ttl_seconds=5)
    assert with_mode(body, limits=limits) == ["kept", "code mode run is unavailable or expired."]


def test_each_parked_run_is_dropped_once_its_own_ttl_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawcell._runs._parked import live_parked_in_process  # pyright: ignore[reportPrivateUsage]

    now = [1000.0]
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    clock["time"] = lambda: now[0]
    for name in ("clawcell._runs._lifecycle", "clawcell._runs._parked", "clawcell._runs._revive"):
        # (imported here: `_revive` is loaded at first use, which may not have come yet)
        monkeypatch.setattr(importlib.import_module(name), "time", SimpleNamespace(**clock))
    twice = "await yield_control();\nawait yield_control();\nreturn 1;"

    async def body(mode: CodeMode) -> list[int]:
        before = live_parked_in_process()
        again = await mode.exec(twice)
        await mode.exec(twice)  # parked until 1005
        now[0] = 1003.0
        assert (await mode.wait(again["runId"]))["status"] == "waiting"  # parked until 1008
        counts = [live_parked_in_process() - before]
        for at in (1004.0, 1006.0, 1007.0, 1009.0):  # each `exec` drops the runs due
            now[0] = at
            await mode.exec("return 1")
            counts.append(live_parked_in_process() - before)
        return counts

    limits = Limits(timeout_ms=250, snapshot_ttl_seconds=5)
    assert with_mode(body, limits=limits) == [2, 2, 1, 1, 0]


def test_the_65th_parked_run_is_refused() -> None:
    async def body(mode: CodeMode) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        parked = [await mode.exec("await yield_control();\nreturn 1;") for _ in range(64)]
        refused = await mode.exec("await yield_control();\nreturn 1;")
        resumed = await mode.wait(parked[0]["runId"])
        return [p["status"] for p in parked], refused, resumed

    statuses, refused, resumed = with_mode(body)
    assert statuses == ["waiting"] * 64
    assert failure(refused)[:3] == ("invalid_input", "input", "too many suspended code mode runs.")
    assert resumed["value"] == 1


def test_cells_run_concurrently_in_one_code_mode() -> None:
    gate = asyncio.Event()
    arrived: list[int] = []

    async def meet(tool_input: dict[str, Any]) -> Any:
        arrived.append(tool_input["i"])
        if len(arrived) == 4:
            gate.set()
        await gate.wait()
        return tool_input["i"] * 10

    async def body(mode: CodeMode) -> list[dict[str, Any]]:
        cells = [
            mode.exec(
                f"globalThis.mine = {i};\nconst r = await meet({{ i: {i} }});\n"
                "return [r, globalThis.mine];"
            )
            for i in range(4)
        ]
        return list(await asyncio.gather(*cells))

    envelopes = with_mode(
        body, tools=[Tool(name="meet", execute=meet)], limits=Limits(timeout_ms=2000)
    )
    assert [e["value"] for e in envelopes] == [[0, 0], [10, 1], [20, 2], [30, 3]]
    assert sorted(arrived) == [0, 1, 2, 3]


def test_a_closed_code_mode_refuses_work_and_closes_idempotently() -> None:
    async def main() -> None:
        mode = CodeMode([echo_tool()], limits=ROOMY)
        parked = await mode.exec("await yield_control();\nreturn 1;")
        await mode.aclose()
        await mode.aclose()
        with pytest.raises(ClosedError):
            await mode.exec("return 1;")
        with pytest.raises(ClosedError):
            await mode.wait(parked["runId"])
        with pytest.raises(ClosedError):
            await mode.call_tool("exec", {"code": "return 1;"})

    run(main())


def test_a_busy_cell_does_not_block_the_event_loop() -> None:
    # The guest runs on clawcell's worker thread: other coroutines keep running meanwhile.
    # Once the cell is past its tool call and spinning, the loop must still turn 1,000 times
    # before the cell ends (a loop blocked by the guest would turn only after its deadline).
    async def main() -> tuple[bool, Any]:
        started = asyncio.Event()

        async def begin(_: dict[str, Any]) -> None:
            started.set()

        async with CodeMode(
            [Tool(name="begin", execute=begin)], limits=Limits(timeout_ms=60_000)
        ) as mode:
            cell = asyncio.ensure_future(mode.exec("await begin({}); while (true) {}"))
            await started.wait()
            for _ in range(1000):
                await asyncio.sleep(0)  # one loop turn: counts turns, not time
            spinning = not cell.done()
            cell.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await cell
            return spinning, (await mode.exec("return 1"))["value"]

    assert run(main()) == (True, 1)


def test_a_cancelled_wait_ends_the_run_and_the_next_cell_runs_normally() -> None:
    started = asyncio.Event()

    async def slow(tool_input: dict[str, Any]) -> Any:
        started.set()
        await asyncio.Event().wait()  # never settles: only the cancellation ends it
        return tool_input

    async def body(mode: CodeMode) -> tuple[dict[str, Any], dict[str, Any]]:
        parked = await mode.exec("await yield_control();\nreturn await slow({});")
        assert parked["status"] == "waiting"
        waiting = asyncio.ensure_future(mode.wait(parked["runId"]))
        await started.wait()  # the resumed leg is inside the tool call
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        with pytest.raises(InputError, match="unavailable or expired"):
            await mode.wait(parked["runId"])
        return parked, await mode.exec("return 7")

    parked, after = with_mode(body, tools=[Tool(name="slow", execute=slow)])
    assert parked["reason"] == "yield"
    assert after["value"] == 7


def legs_garbage() -> list[dict[str, int]]:
    """The objects (by type) the collector finds after each of three legs, warm."""
    import gc
    from collections import Counter

    async def body(mode: CodeMode) -> list[dict[str, int]]:
        cells = [
            "return 1;",
            "await yield_control('x');\nreturn 2;",
            "const r = await echo({ a: 1 });\nreturn r;",
        ]
        for code in cells:  # warm: caches, lazily built methods
            envelope = await mode.exec(code)
            if envelope["status"] == "waiting":
                await mode.wait(envelope["runId"])
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            garbage: list[dict[str, int]] = []
            for code in cells:
                envelope = await mode.exec(code)
                if envelope["status"] == "waiting":
                    envelope = await mode.wait(envelope["runId"])
                assert envelope["status"] == "completed", envelope
                for _ in range(2):  # the guest's release runs in the loop's next iteration
                    await asyncio.sleep(0)
                gc.collect()
                garbage.append(dict(Counter(type(found).__qualname__ for found in gc.garbage)))
                gc.garbage.clear()
            return garbage
        finally:
            gc.set_debug(0)

    return with_mode(body)


def test_legs_leave_no_cyclic_garbage() -> None:
    """Every leg's objects are freed by reference counting (a cycle would leave them to the
    collector, which then runs every few runtimes): the approval gate holds its cell weakly.
    Measured in a new process: in a whole xdist run the collector once found 133 objects
    after every leg (stop 49), never reproduced alone; it finds whatever became garbage
    meanwhile, an earlier test's leftovers included."""
    assert in_fresh_interpreter(__name__, "legs_garbage") == [{}, {}, {}]
