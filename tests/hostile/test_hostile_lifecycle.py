"""Cancellation at chosen bridge events, session isolation and run-id tampering through the
public API: each ends cleanly and a probe cell afterwards sees nothing of it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CellUpdate, CodeMode, InputError, Limits, MemoryStore, Tool
from tests.conftest import echo_tool, run
from tests.hostile.test_hostile_cells import (
    _probe,  # pyright: ignore[reportPrivateUsage]
)

ROOMY = Limits(timeout_ms=60_000)
WORK = (
    "globalThis.__leak = 1;\n"
    "for (let i = 0; i < 6; i++) {\n"
    "  text('step ' + i);\n"
    "  await echo({ i });\n"
    "  await new Promise((r) => setTimeout(r, 0));\n"
    "  await store('k' + i, i);\n"
    "}\nreturn 'finished';"
)


def _cancelling_at(event: str, nth: int) -> tuple[Any, list[asyncio.Future[Any]]]:
    """An `on_update` callback that cancels the task put in the returned list at the `nth`
    matching event, from the callback itself: the cancellation lands at the cell's next
    suspension. (Waking another task to cancel it would race the cell: a tool call that
    finishes in its first step gives the loop no turn of its own.)"""
    target: list[asyncio.Future[Any]] = []
    seen = [0]

    def on_update(update: CellUpdate) -> None:
        if update.kind != event:
            return
        seen[0] += 1
        if seen[0] == nth:
            target[0].cancel()

    return on_update, target


@pytest.mark.parametrize("nth", [1, 2, 4, 6])
@pytest.mark.parametrize("event", ["output", "tool_started", "tool_settled"])
def test_cancelling_exec_at_a_bridge_event_leaves_the_runtime_clean(event: str, nth: int) -> None:
    async def main() -> list[Any]:
        async with CodeMode([echo_tool()], limits=ROOMY) as mode:
            before = await _probe(mode)
            on_update, target = _cancelling_at(event, nth)
            task = asyncio.ensure_future(mode.exec(WORK, on_update=on_update))
            target.append(task)
            with pytest.raises(asyncio.CancelledError):
                await task
            after = await _probe(mode)
            loaded = await mode.exec("return [await load('k0'), await load('k5')];")
            return [before == after, loaded["value"]]

    same, loaded = run(main())
    assert same is True
    assert loaded == [None, None]  # a cancelled cell's store writes are discarded


@pytest.mark.parametrize("nth", [1, 3])
def test_cancelling_wait_at_a_tool_call_leaves_the_runtime_clean(nth: int) -> None:
    code = "await yield_control('pause');\n" + WORK

    async def main() -> list[Any]:
        async with CodeMode([echo_tool()], limits=ROOMY) as mode:
            before = await _probe(mode)
            parked = await mode.exec(code)
            assert parked["status"] == "waiting", parked
            on_update, target = _cancelling_at("tool_started", nth)
            task = asyncio.ensure_future(mode.wait(parked["runId"], on_update=on_update))
            target.append(task)
            with pytest.raises(asyncio.CancelledError):
                await task
            with pytest.raises(InputError):
                await mode.wait(parked["runId"])
            return [before == await _probe(mode)]

    assert run(main()) == [True]


def test_sessions_sharing_a_store_see_only_their_own_values_and_runs() -> None:
    async def main() -> list[Any]:
        store = MemoryStore()
        async with (
            CodeMode([echo_tool()], store=store, session_id="a", limits=ROOMY) as a,
            CodeMode([echo_tool()], store=store, session_id="b", limits=ROOMY) as b,
        ):
            await a.exec("await store('secret', 42); globalThis.__leak = 1; return 1;")
            parked = await a.exec("await yield_control('x'); return 'a';")
            saved = await a.exec("return (await results.save({ s: 1 })).id;")
            seen = await b.exec("return [await load('secret'), typeof globalThis.__leak];")
            loaded = await b.exec(
                f"try {{ return await results.load({saved['value']!r}); }} "
                "catch (e) { return 'refused'; }"
            )
            with pytest.raises(InputError):
                await b.wait(parked["runId"])
            resumed = await a.wait(parked["runId"])
            return [
                seen["value"],
                loaded["value"],
                resumed["value"],
                await _probe(b) == await _probe(a),
            ]

    assert run(main()) == [[None, "undefined"], "refused", "a", True]


FORGED_IDS = [
    "cm_00000000-0000-0000-0000-000000000000",
    "cm_",
    "../../etc/passwd",
    "cm_" + "x" * 10_000,
    "cm_\u0000",
    " cm_ spaced ",
    "bridge:callValue:1",
]


@pytest.mark.parametrize("run_id", FORGED_IDS, ids=range(len(FORGED_IDS)))
def test_a_forged_run_id_is_an_input_error_and_changes_nothing(run_id: str) -> None:
    async def main() -> bool:
        async with CodeMode([echo_tool()], limits=ROOMY) as mode:
            before = await _probe(mode)
            with pytest.raises(InputError):
                await mode.wait(run_id)
            return before == await _probe(mode)

    assert run(main()) is True


def test_a_finished_run_cannot_be_waited_on_again() -> None:
    async def main() -> list[Any]:
        async with CodeMode([echo_tool()], limits=ROOMY) as mode:
            parked = await mode.exec("await yield_control('once');\nreturn 7;")
            done = await mode.wait(parked["runId"])
            with pytest.raises(InputError):
                await mode.wait(parked["runId"])
            return [done["value"]]

    assert run(main()) == [7]


def test_two_concurrent_waits_on_one_run_resume_it_once() -> None:
    calls: list[int] = []

    async def count(tool_input: dict[str, Any]) -> Any:
        calls.append(1)
        await asyncio.sleep(0)
        return tool_input

    async def main() -> list[Any]:
        tools = [Tool(name="count", execute=count), echo_tool()]
        async with CodeMode(tools, limits=ROOMY) as mode:
            parked = await mode.exec("await yield_control('x');\nawait count({});\nreturn 1;")
            results = await asyncio.gather(
                mode.wait(parked["runId"]), mode.wait(parked["runId"]), return_exceptions=True
            )
            statuses = sorted(
                r["status"] if isinstance(r, dict) else type(r).__name__ for r in results
            )
            return [statuses, len(calls)]

    statuses, calls_made = run(main())
    assert calls_made == 1
    assert "completed" in statuses
