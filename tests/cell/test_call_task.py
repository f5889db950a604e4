"""A tool call's own task, its first step taken when it is made (`_cell/_call_task.py`): the
call's task is the current task in the tool, its context is its own, a tool that suspends goes
on as any task does, and cancelling it (from outside, or from the tool) cancels only it."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from typing import Any

import pytest

from clawcell import CodeMode, Tool
from clawcell._cell._call_task import start_call
from tests.conftest import run

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("_seen", default="outside")


async def _returns(value: int) -> int:
    return value


def test_a_coroutine_that_never_suspends_is_done_when_its_task_is_made() -> None:
    async def main() -> tuple[bool, int]:
        task = start_call(_returns(7))
        return task.done(), task.result()

    assert run(main()) == (True, 7)


def test_the_first_step_sees_the_calls_own_task_and_context_then_the_caller_is_back() -> None:
    async def call() -> tuple[Any, str]:
        _seen.set("inside")
        return asyncio.current_task(), _seen.get()

    async def main() -> list[Any]:
        caller = asyncio.current_task()
        task = start_call(call())
        inner, value = task.result()
        return [inner is task, inner is not caller, value, _seen.get()]

    assert run(main()) == [True, True, "inside", "outside"]


def test_a_coroutine_that_suspends_goes_on_as_a_task_listed_while_pending() -> None:
    release = asyncio.Event()

    async def call() -> str:
        await release.wait()
        return "done"

    async def main() -> list[Any]:
        task = start_call(call())
        listed = task in asyncio.all_tasks()
        release.set()
        return [task.done(), listed, await task]

    assert run(main()) == [False, True, "done"]


def test_a_task_that_cancels_itself_ends_cancelled_and_the_caller_is_not_cancelled() -> None:
    async def call() -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)
        return "unreachable"

    async def main() -> list[Any]:
        task = start_call(call())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        caller = asyncio.current_task()
        assert caller is not None
        return [task.cancelled(), caller.cancelling()]

    assert run(main()) == [True, 0]


def test_cancelling_a_waiting_task_throws_into_its_coroutine() -> None:
    cleaned: list[str] = []

    async def call() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("finally")

    async def main() -> bool:
        task = start_call(call())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert run(main()) is True
    assert cleaned == ["finally"]


def test_a_failure_in_the_first_step_is_the_tasks_exception() -> None:
    async def call() -> None:
        raise LookupError("no such thing")

    async def main() -> BaseException | None:
        return start_call(call()).exception()

    failure = run(main())
    assert isinstance(failure, LookupError) and str(failure) == "no such thing"


def test_a_task_group_inside_the_call_cancels_its_children_on_failure() -> None:
    async def child() -> None:
        await asyncio.Event().wait()

    async def failing() -> None:
        await asyncio.sleep(0)
        raise LookupError("child failed")

    async def call() -> str:
        outcome, waiting = "not raised", None
        try:
            async with asyncio.TaskGroup() as group:
                waiting = group.create_task(child())
                group.create_task(failing())
        except* LookupError:
            outcome = f"caught, waiting cancelled: {waiting and waiting.cancelled()}"
        return outcome

    async def main() -> str:
        return await start_call(call())

    assert run(main()) == "caught, waiting cancelled: True"


def _turns_seen_by_calls(monkeypatch: pytest.MonkeyPatch, every_s: float) -> list[int]:
    """How many loop turns a background task had counted at each of 40 sequential calls of a
    tool that never suspends, on the loop thread, with the loop given a turn every `every_s`
    of the leg."""
    monkeypatch.setattr("clawcell._cell._cell.LOOP_TURN_S", every_s)
    turns = [0]
    seen: list[int] = []

    async def count_turns() -> None:
        while True:
            turns[0] += 1
            await asyncio.sleep(0)

    async def probe(_: dict[str, Any]) -> None:
        seen.append(turns[0])

    async def main() -> None:
        async with CodeMode([Tool(name="probe", execute=probe)], guest_thread=False) as mode:
            counter = asyncio.ensure_future(count_turns())
            await asyncio.sleep(0)
            envelope = await mode.exec("for (let i = 0; i < 40; i++) await probe({}); return 1;")
            counter.cancel()
            assert envelope["status"] == "completed", envelope

    run(main())
    return seen


def test_tools_that_never_suspend_take_no_loop_turn_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _turns_seen_by_calls(monkeypatch, every_s=3600.0)
    assert len(seen) == 40
    assert len(set(seen[1:])) == 1  # one turn at the leg's first wait, then none


def test_a_leg_of_such_calls_still_gives_the_loop_a_turn_when_one_is_due(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _turns_seen_by_calls(monkeypatch, every_s=0.0)
    assert seen == sorted(set(seen))  # the background task ran between every two calls
    assert len(seen) == 40


def test_a_python_without_the_internals_gets_ordinary_tasks_and_cells_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawcell._cell import _call_task, _pending

    lazy = _call_task.starter(False)  # what `start_call` is on such a Python
    monkeypatch.setattr(_pending, "start_call", lazy)
    calls: list[Any] = []

    async def probe(params: dict[str, Any]) -> int:
        calls.append(asyncio.current_task())
        return len(calls)

    async def main() -> tuple[bool, dict[str, Any]]:
        task = lazy(_returns(3))
        started_at_once = task.done()
        assert await task == 3
        async with CodeMode([Tool(name="probe", execute=probe)], guest_thread=False) as mode:
            code = "let n = 0; for (let i = 0; i < 5; i++) n = await probe({}); return n;"
            return started_at_once, await mode.exec(code)

    started_at_once, envelope = run(main())
    assert started_at_once is False  # a plain task: its first step waits for a loop turn
    assert envelope["status"] == "completed" and envelope["value"] == 5, envelope
    assert len({id(task) for task in calls}) == 5  # each call still ran as its own task


def test_this_python_has_the_internals_the_shim_reads() -> None:
    from clawcell._cell import _call_task

    assert _call_task.SHIM_USABLE is (sys.version_info < (3, 12))


async def _fails() -> int:
    raise ValueError("boom")


async def _waits_forever() -> int:
    await asyncio.Event().wait()
    return 0


def _destroyed_task_log(caplog: pytest.LogCaptureFixture, coro_fn: Any) -> str:
    """What asyncio logs when a call task made from `coro_fn()` is dropped unread."""
    import gc

    async def main() -> None:
        start_call(coro_fn())  # dropped at once: nothing reads its outcome
        await asyncio.sleep(0)

    with caplog.at_level("ERROR", logger="asyncio"):
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(main())
            gc.collect()
        finally:
            loop.close()
        gc.collect()
    return caplog.text


def test_a_call_task_done_in_its_first_step_is_dropped_without_a_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert _destroyed_task_log(caplog, lambda: _returns(1)) == ""


def test_a_call_task_whose_first_step_failed_unread_logs_it_when_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert "exception was never retrieved" in _destroyed_task_log(caplog, _fails)


def test_a_call_task_dropped_while_pending_logs_it(caplog: pytest.LogCaptureFixture) -> None:
    assert "Task was destroyed but it is pending" in _destroyed_task_log(caplog, _waits_forever)
