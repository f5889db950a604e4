"""A cell's first segment begun on the loop thread (`runtime/_first_segment.py`): a quick cell
never leaves the loop thread; a start that computes past its slice, or whose report only guest
code can read, is finished on the guest thread while the loop serves other work; a syntax
error is read on the loop thread; without call futures the segment runs whole on the guest
thread. Every exit (a parse the backstop traps, here or after the move; a signal taken here)
leaves no call future, hard deadline or watch behind, and the guest's next cell runs."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.runtime import EngineFailure, GuestPool, StepResult, _crossing, _first_segment, _guest  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._first_segment import FirstSegment  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]
from tests.conftest import run
from tests.runtime._buffers import spy_buffers
from tests.runtime._loop_turns import FREE_LOOP_TURNS, with_loop_turns


def _long_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slices of an hour: what must stay on the loop thread does even on a stalled machine
    (a first cell in a process touches cold code pages; a loaded one is preempted)."""
    monkeypatch.setattr(_first_segment, "LOOP_SLICE_S", 3600.0)


def _spy(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    """Where each `run_here` and each `run_rest` ran (thread names)."""
    here: list[str] = []
    rest: list[str] = []
    run_here, run_rest = FirstSegment.run_here, FirstSegment.run_rest

    def spy_here(self: FirstSegment) -> bool:
        here.append(threading.current_thread().name)
        return run_here(self)

    def spy_rest(self: FirstSegment) -> None:
        rest.append(threading.current_thread().name)
        run_rest(self)

    monkeypatch.setattr(FirstSegment, "run_here", spy_here)
    monkeypatch.setattr(FirstSegment, "run_rest", spy_rest)
    return here, rest


async def _exec(code: str) -> dict[str, Any]:
    async with CodeMode([], limits=Limits(timeout_ms=60_000)) as mode:
        return await mode.exec(code)


def test_a_quick_cell_never_leaves_the_loop_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    _long_slices(monkeypatch)
    here, rest = _spy(monkeypatch)
    assert run(_exec("return 6 * 7;"))["value"] == 42
    assert here == [threading.current_thread().name] and rest == []


def test_a_start_that_computes_past_its_slice_finishes_on_a_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here, rest = _spy(monkeypatch)
    code = "const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; return 1;"
    envelope, turns = run(with_loop_turns(_exec(code)))
    assert envelope["value"] == 1
    assert here == [threading.current_thread().name]
    assert len(rest) == 1 and rest[0].startswith("clawcell-guest-")
    assert turns >= FREE_LOOP_TURNS  # the loop ran on while the cell computed (held: a few)


def test_a_report_only_guest_code_can_read_is_read_on_the_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long report is a rope, not a flat string: reading it flattens it in the guest."""
    _long_slices(monkeypatch)
    here, rest = _spy(monkeypatch)
    pending: list[int | None] = []
    run_rest = FirstSegment.run_rest

    def recording(self: FirstSegment) -> None:
        pending.append(self._pending)  # pyright: ignore[reportPrivateUsage]
        run_rest(self)

    monkeypatch.setattr(FirstSegment, "run_rest", recording)
    envelope = run(_exec("text('x'.repeat(100000));\nreturn 1;"))
    assert envelope["status"] == "completed" and envelope["value"] == 1
    assert here == [threading.current_thread().name]
    assert len(rest) == 1 and rest[0].startswith("clawcell-guest-")
    assert pending[0] is not None  # the start was over: only its report was left to read


def test_a_syntax_error_is_read_on_the_loop_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    _long_slices(monkeypatch)
    here, rest = _spy(monkeypatch)
    envelope = run(_exec("return (;"))
    assert envelope["status"] == "failed"
    assert envelope["error"].startswith("SyntaxError at openclaw-code-mode:user.js:1:")
    assert rest == [] and here == [threading.current_thread().name]


def test_without_call_futures_the_first_segment_runs_whole_on_a_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_crossing, "FIBERS_USABLE", False)
    monkeypatch.setattr(_guest, "FIBERS_USABLE", False)
    here, rest = _spy(monkeypatch)
    compiled: list[str] = []
    compile_ = _guest.Guest.compile

    def recording(self: _guest.Guest, code: str) -> int:
        if code:  # not a new guest's warm-up compile of ""
            compiled.append(threading.current_thread().name)
        return compile_(self, code)

    monkeypatch.setattr(_guest.Guest, "compile", recording)
    assert run(_exec("return 2;"))["value"] == 2
    assert here == [] and rest == []
    assert len(compiled) == 1 and compiled[0].startswith("clawcell-guest-")


# -- every exit leaves the guest clean ------------------------------------------------------

_INSTALL = json.dumps({"maxPending": 16, "bindings": []})
_BIG = "//" + "x" * 100_000 + "\n"  # larger than the 64 KiB staging buffer: a buffer of its own


def _pool(megabytes: int) -> GuestPool:
    """A pool of its own configuration: its guests are built now, with this case's patches
    (pooled guests keep the callbacks they were built with)."""
    return GuestPool(memory_limit_bytes=megabytes * 1024 * 1024, install_config=_INSTALL)


def _watched(instance: Instance) -> set[int]:
    """The watchdog's watched tokens (shared by every guest of the process)."""
    return set(instance.reactor.watchdog._watched)  # pyright: ignore[reportPrivateUsage]


def _assert_clean(instance: Instance, watched_before: set[int]) -> None:
    """Nothing of the first segment is left: no call future, no hard deadline, no watch."""
    assert instance.store.future is None
    assert instance.hard_deadline.at == float("inf")
    assert instance.hard_deadline.slice_at == float("inf")
    assert _watched(instance) <= watched_before


def _next_cell_runs(pool: GuestPool) -> None:
    guest = pool.acquire()
    try:
        segment = guest.first_here("return 5;", time.monotonic() + 3600)
        assert segment is not None
        assert segment.run_here() or _rest_on_a_thread(segment) is None
        parsed, first = segment.outcome()
        assert parsed and isinstance(first, StepResult) and first.value_json == "5"
    finally:
        pool.release(guest)


def _rest_on_a_thread(segment: FirstSegment) -> None:
    thread = threading.Thread(target=segment.run_rest)
    thread.start()
    thread.join()


@pytest.mark.parametrize("moved", [False, True], ids=["on_the_loop_thread", "after_moving"])
def test_a_parse_the_backstop_traps_is_a_timeout_and_leaves_the_guest_clean(
    monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """A source larger than the staging buffer whose parse outlasts the leg's hard deadline
    (a large source, a short budget) is a `timeout`, as on the whole-segment path. It was a
    `GuestTrap` raised out of `exec`: the staging buffer was freed by a call into the guest
    while the passed hard deadline was still set, and that call trapped too."""
    monkeypatch.setattr(_first_segment, "LOOP_SLICE_S", 0.0 if moved else 3600.0)
    staged, freed = spy_buffers(monkeypatch)
    pool = _pool(66 + moved)
    guest = pool.acquire()
    instance = guest.instance
    watched = _watched(instance)
    try:
        slow = "".join(f"let v{i} = {i};\n" for i in range(2000))  # parsed on after the move
        segment = guest.first_here(_BIG + slow + "return 1;", time.monotonic() + 3600)
        assert segment is not None
        if not moved:
            segment._backstop_at = 0.0  # pyright: ignore[reportPrivateUsage]
        compile_future = Instance.compile_future

        def bumped(self: Instance, ptr: int, size: int) -> Any:
            # The epoch moves on as the parse begins (its source staged), so its first check
            # asks the callback: the slice is over (moved), or the hard deadline passed.
            self.reactor.engine.increment_epoch()
            return compile_future(self, ptr, size)

        monkeypatch.setattr(Instance, "compile_future", bumped)
        assert segment.run_here() is not moved
        if moved:
            instance.hard_deadline.at = 0.0  # the hard deadline passes while it is parsed
            instance.reactor.engine.increment_epoch()
            _rest_on_a_thread(segment)
        parsed, failure = segment.outcome()
        assert not parsed and isinstance(failure, EngineFailure)
        assert failure.kind == "timeout"
        _assert_clean(instance, watched)
        assert len(staged) == 1 and freed.count(staged[0]) <= 1
    finally:
        pool.release(guest)
    _next_cell_runs(pool)


def test_a_signal_taken_while_the_first_segment_runs_here_is_raised_and_leaves_it_clean(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A signal's `KeyboardInterrupt`, raised in a host function (the interrupt handler) while
    the start runs on the loop thread, is the program's: it is raised, and no hard deadline
    is left set on the guest (it was: the exception left `run_here` from its handler)."""
    _long_slices(monkeypatch)
    made = _guest.interrupt_check
    raised: list[str] = []

    def interrupt_check(guest: Any) -> Any:
        check = made(guest)

        def interrupted() -> bool:
            alive = guest()
            if not raised and alive is not None and alive.instance.store.future is not None:
                raised.append(threading.current_thread().name)
                raise KeyboardInterrupt  # as a signal handler run here would
            return check()

        return interrupted

    monkeypatch.setattr(_guest, "interrupt_check", interrupt_check)
    pool = _pool(68)
    guest = pool.acquire()
    watched = _watched(guest.instance)
    try:
        code = "let n = 0;\nfor (let i = 0; i < 1e6; i++) n += i;\nreturn 1;"
        segment = guest.first_here(code, time.monotonic() + 3600)
        assert segment is not None
        with pytest.raises(KeyboardInterrupt):
            segment.run_here()
        assert raised == [threading.current_thread().name]
        _assert_clean(guest.instance, watched)
    finally:
        pool.release(guest)
    _next_cell_runs(pool)


# -- many cells, and a cancelled one --------------------------------------------------------

_MIXED = (
    ("return 1;", ("completed", 1)),  # over on the loop thread
    ("let n = 0;\nfor (let i = 0; i < 3e5; i++) n += i % 3;\nreturn 2;", ("completed", 2)),
    ("return (;", ("failed", None)),  # a syntax error, read here
    ("text('x'.repeat(100000));\nreturn 3;", ("completed", 3)),  # a rope report
    ("}); throw { toString() { return 'no'; } }; (() => {", ("failed", None)),  # read there
)


def test_fifty_concurrent_cells_each_end_once_with_their_own_outcome() -> None:
    """Fifty first segments begun on the loop thread at once, some over there, some moved to
    the guest threads (a computation, a report or a thrown value only guest code reads)."""

    async def main() -> list[tuple[str, Any]]:
        async with CodeMode([], limits=Limits(timeout_ms=120_000)) as mode:
            cells = [_MIXED[i % len(_MIXED)][0] for i in range(50)]
            envelopes = await asyncio.gather(*(mode.exec(code) for code in cells))
            assert (await mode.exec("return 4;"))["value"] == 4  # and the next one runs
            return [(e["status"], e.get("value")) for e in envelopes]

    assert run(main()) == [_MIXED[i % len(_MIXED)][1] for i in range(50)]


def test_a_cell_cancelled_while_its_first_segment_runs_on_a_guest_thread_is_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The caller cancels `exec` while the moved start computes on: the guest is stopped
    (its interrupt handler ends the segment) rather than left to spin to the leg's deadline,
    an hour away here, and the next cell runs."""
    started, ended = threading.Event(), threading.Event()
    run_rest = FirstSegment.run_rest
    segments: list[FirstSegment] = []

    def spy(self: FirstSegment) -> None:
        segments.append(self)
        started.set()
        try:
            run_rest(self)
        finally:
            ended.set()

    monkeypatch.setattr(FirstSegment, "run_rest", spy)

    async def main() -> Any:
        async with CodeMode([], limits=Limits(timeout_ms=3_600_000)) as mode:
            task = asyncio.ensure_future(mode.exec("for (;;) {}"))
            while not started.is_set():
                await asyncio.sleep(0.001)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.to_thread(ended.wait, 120)  # stopped, not an hour on
            return (await mode.exec("return 5;"))["value"]

    assert run(main()) == 5
    (segment,) = segments
    parsed, failure = segment.outcome()
    assert parsed and isinstance(failure, EngineFailure) and failure.kind == "thrown"
    instance = segment._guest.instance  # pyright: ignore[reportPrivateUsage]
    assert instance.store.future is None and instance.hard_deadline.at == float("inf")
