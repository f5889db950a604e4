"""A guest turn begun on the loop thread and moved to a guest thread if it computes on
(`runtime/_crossing.py`): a quick turn never leaves the loop thread; one that computes past
its slice (in JavaScript or in one long native operation) finishes on a guest thread while
the event loop keeps serving other work; a report only guest code can read is read there; a
settle batch larger than the staging buffer is staged in a buffer of its own and freed after
the turn; a crossing whose guest code overruns the deadline ends as a timeout, and the next
cell runs normally."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import _crossing  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime import _guest as guest_module  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._crossing import TurnCrossing  # pyright: ignore[reportPrivateUsage]
from tests.conftest import run
from tests.runtime._buffers import spy_buffers
from tests.runtime._loop_turns import FREE_LOOP_TURNS, with_loop_turns

BIG = "x" * 200_000  # the reply batch is larger than the 64 KiB staging buffer


async def _big(_: dict[str, Any]) -> Any:
    return BIG


def test_a_batch_larger_than_the_staging_buffer_is_freed_after_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    staged, freed = spy_buffers(monkeypatch)

    async def main() -> list[Any]:
        tools = [Tool(name="big", execute=_big, parameters={"type": "object"})]
        values: list[Any] = []
        for guest_thread in (True, False):
            async with CodeMode(tools, guest_thread=guest_thread) as mode:
                envelope = await mode.exec("return (await big({})).length;")
                values.append(envelope["value"])
        return values

    assert run(main()) == [len(BIG), len(BIG)]
    assert len(staged) == 2 and set(staged) <= set(freed)


def test_a_crossing_that_overruns_its_deadline_times_out_and_the_next_cell_runs() -> None:
    async def main() -> tuple[dict[str, Any], float, Any]:
        tools = [Tool(name="big", execute=_big, parameters={"type": "object"})]
        async with CodeMode(tools, limits=Limits(timeout_ms=300)) as mode:
            started = time.monotonic()
            envelope = await mode.exec("await big({});\nwhile (true) {}")
            took = time.monotonic() - started
            after = await mode.exec("return 1")
        return envelope, took, after["value"]

    envelope, took, after = run(main())
    assert (envelope["status"], envelope["code"], after) == ("failed", "timeout", 1)
    assert took < 30  # a hang guard, not a timing check: the leg's budget is 0.3 s


async def _echo(params: dict[str, Any]) -> Any:
    return params


def _spy_crossings(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Where `run_sliced` ran, and where each `TurnCrossing.cross` ran (thread names)."""
    sliced: list[str] = []
    crossed: list[str] = []
    run_sliced, cross = guest_module.run_sliced, TurnCrossing.cross

    def spy_sliced(*args: Any) -> Any:
        sliced.append(threading.current_thread().name)
        return run_sliced(*args)

    def spy_cross(self: TurnCrossing) -> None:
        crossed.append(threading.current_thread().name)
        cross(self)

    monkeypatch.setattr(guest_module, "run_sliced", spy_sliced)
    monkeypatch.setattr(TurnCrossing, "cross", spy_cross)
    return sliced, crossed


def test_a_quick_turn_on_the_default_path_never_leaves_the_loop_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Slices of an hour: a quick turn stays on the loop thread even on a stalled machine.
    monkeypatch.setattr(_crossing, "LOOP_SLICE_S", 3600.0)
    sliced, crossed = _spy_crossings(monkeypatch)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools) as mode:
            code = "let n = 0;\nfor (let i = 0; i < 3; i++) n += (await echo({ i })).i;\nreturn n;"
            return (await mode.exec(code))["value"]

    assert run(main()) == 3
    assert sliced == [threading.current_thread().name] * 3  # `run` drives the loop here
    assert crossed == []


@pytest.mark.parametrize(
    "work",
    [
        "const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; return 1;",
        # one native operation of about 0.3 s, inside which the interrupt handler never runs
        "return (7n ** 200000n) * (3n ** 200000n) > 0n ? 1 : 0;",
    ],
    ids=["javascript", "native"],
)
def test_a_turn_that_computes_past_its_slice_moves_to_a_guest_thread(
    monkeypatch: pytest.MonkeyPatch, work: str
) -> None:
    sliced, crossed = _spy_crossings(monkeypatch)

    async def main() -> tuple[Any, int]:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools, limits=Limits(timeout_ms=60_000)) as mode:
            envelope, turns = await with_loop_turns(mode.exec("await echo({});\n" + work))
        return envelope["value"], turns

    value, turns = run(main())
    assert value == 1
    assert sliced == [threading.current_thread().name]
    assert len(crossed) == 1 and crossed[0].startswith("clawcell-guest-")
    # The loop thread was held for a slice, not for the 0.3-0.4 s the turn computed: it gave
    # other work its turns meanwhile (held the whole time, it would have given a handful).
    assert turns >= FREE_LOOP_TURNS


class _ThrownReport:
    """An instance whose turn report is a value only guest code can read."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def reads_flat(self, value: int) -> bool:
        return False

    def checked(self, value: int) -> int:
        self.calls.append(f"checked@{threading.current_thread().name}")
        return value

    def take_string(self, value: int, *, strict: bool) -> str:
        self.calls.append(f"take_string@{threading.current_thread().name}")
        return ""

    def disarm_backstop(self, token: int) -> None:
        self.calls.append(f"disarm {token}")


def test_a_report_only_guest_code_can_read_is_read_by_cross() -> None:
    instance = _ThrownReport()
    crossing = TurnCrossing(instance, 0.0, 0, 7, pending=5)  # type: ignore[arg-type]
    worker = threading.Thread(target=crossing.cross, name="clawcell-guest-test")
    worker.start()
    worker.join()
    assert instance.calls == [
        "checked@clawcell-guest-test",
        "take_string@clawcell-guest-test",
        "disarm 7",
    ]


def test_without_fibers_every_turn_is_crossed_whole_on_a_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_crossing, "FIBERS_USABLE", False)
    sliced, crossed = _spy_crossings(monkeypatch)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        async with CodeMode(tools) as mode:
            return (await mode.exec("return (await echo({ i: 2 })).i + 1;"))["value"]

    assert run(main()) == 3
    assert len(sliced) == 1 and len(crossed) == 1
    assert crossed[0].startswith("clawcell-guest-")


def _before_each_interrupt_check(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[Any], None]
) -> None:
    """Guests built from now on call `before(guest)` (the guest, or `None` once collected)
    ahead of each of their interrupt checks."""
    made = guest_module.interrupt_check

    def interrupt_check(guest: Any) -> Any:
        check = made(guest)

        def interrupted() -> bool:
            before(guest())
            return check()

        return interrupted

    monkeypatch.setattr(guest_module, "interrupt_check", interrupt_check)


@pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit])
def test_a_signal_taken_while_a_turn_runs_on_the_loop_thread_is_raised_not_a_cell_failure(
    monkeypatch: pytest.MonkeyPatch, signal: type[BaseException]
) -> None:
    """Python runs a signal's handler on the main thread, at its next bytecode: during a turn
    on the loop thread that is a host function or the epoch callback, on the call future's
    stack. What it raises (Ctrl-C's `KeyboardInterrupt`, `SystemExit`) is the host's, never
    the cell's failure: it must reach the program, not become a `trap` or `timeout`."""
    monkeypatch.setattr(_crossing, "LOOP_SLICE_S", 60.0)  # the whole turn on the loop thread
    raised: list[str] = []

    def before(alive: Any) -> None:
        if not raised and alive is not None and alive.instance.store.future is not None:
            raised.append(threading.current_thread().name)
            raise signal  # as a signal handler run here would

    _before_each_interrupt_check(monkeypatch, before)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        # a configuration of its own per case: guests built now, with this case's check
        megabytes = 72 if signal is KeyboardInterrupt else 74
        limits = Limits(timeout_ms=60_000, memory_limit_bytes=megabytes * 1024 * 1024)
        async with CodeMode(tools, limits=limits) as mode:
            code = "await echo({});\nlet n = 0;\nfor (let i = 0; i < 1e6; i++) n += i;\nreturn 1;"
            return await mode.exec(code)

    with pytest.raises(signal):
        run(main())
    assert raised == [threading.main_thread().name]


def test_a_slice_ending_in_the_rejection_tracker_still_moves_the_turn_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hostile cell's turn that rejects promises in a loop spends much of its time in the
    rejection tracker, a host function that calls guest code: the slice's one epoch bump is
    often first seen there. The turn must still leave the loop thread at its next check."""
    monkeypatch.setattr(_crossing, "LOOP_SLICE_S", 60.0)  # only the forced end below ends it
    sliced, crossed = _spy_crossings(monkeypatch)
    made = guest_module.rejection_tracker
    ended: list[bool] = []

    def rejection_tracker(method: Any) -> Any:
        track = made(method)

        def tracked(*args: int) -> None:
            instance = method().__self__.instance  # `method`: the guest's, weakly
            if not ended and instance.store.future is not None:
                ended.append(True)
                instance.hard_deadline.slice_at = 0.0  # the slice ends here, in the tracker
                instance.reactor.engine.increment_epoch()
            track(*args)  # an unhandled rejection: the tracker calls guest code

        return tracked

    monkeypatch.setattr(guest_module, "rejection_tracker", rejection_tracker)

    async def main() -> Any:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        limits = Limits(timeout_ms=60_000, memory_limit_bytes=76 * 1024 * 1024)
        async with CodeMode(tools, limits=limits) as mode:
            code = (
                "await echo({});\nPromise.reject(1).catch(() => {});\n"
                "let n = 0;\nfor (let i = 0; i < 1e6; i++) n += i;\nreturn 1;"
            )
            return (await mode.exec(code))["value"]

    assert run(main()) == 1
    assert ended == [True]
    assert sliced == [threading.current_thread().name]
    assert len(crossed) == 1 and crossed[0].startswith("clawcell-guest-")


@pytest.mark.parametrize("moved", [False, True], ids=["on_the_loop_thread", "after_moving"])
def test_a_wasm_stack_overflow_on_a_call_future_is_a_clean_failure(
    monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """Deep native recursion (stringifying nested arrays) overflows the wasm stack before
    QuickJS's own check: on a call future's stack, where the turn began or after it moved,
    that is the same failure as anywhere, and the guest's next cell runs."""
    monkeypatch.setattr(_crossing, "LOOP_SLICE_S", 60.0)  # only the forced end below ends it
    sliced, crossed = _spy_crossings(monkeypatch)
    ended: list[bool] = []

    def before(alive: Any) -> None:
        if moved and not ended and alive is not None and alive.instance.store.future:
            ended.append(True)  # the slice ends while the cell builds its arrays
            alive.instance.hard_deadline.slice_at = 0.0
            alive.instance.reactor.engine.increment_epoch()

    _before_each_interrupt_check(monkeypatch, before)

    async def main() -> tuple[Any, Any]:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        # a configuration of its own per case: guests built now, with this case's check
        limits = Limits(timeout_ms=60_000, memory_limit_bytes=(80 + 4 * moved) * 1024 * 1024)
        async with CodeMode(tools, limits=limits) as mode:
            deep = (
                "await echo({});\nlet o = [];\nfor (let i = 0; i < 1e5; i++) o = [o];\n"
                "return JSON.stringify(o).length;"
            )
            failed = await mode.exec(deep)
            after = await mode.exec("await echo({});\nreturn 5;")
            return failed, after

    failed, after = run(main())
    assert failed["status"] == "failed"
    assert failed["error"].startswith("RangeError: Maximum call stack size exceeded")
    assert (after["status"], after["value"]) == ("completed", 5)
    assert len(sliced) == 2
    assert ended == ([True] if moved else [])
    assert len(crossed) == (1 if moved else 0)
