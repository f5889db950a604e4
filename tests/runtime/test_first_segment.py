"""A cell's first segment begun on the loop thread (`runtime/_first_segment.py`): a quick cell
never leaves the loop thread; a start that computes past its slice, or whose report only guest
code can read, is finished on the guest thread while the loop serves other work; a syntax
error is read on the loop thread; without call futures the segment runs whole on the guest
thread."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.runtime import _crossing, _first_segment, _guest  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._first_segment import FirstSegment  # pyright: ignore[reportPrivateUsage]
from tests.conftest import run


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


async def _exec(code: str, *, ticks: list[int] | None = None) -> dict[str, Any]:
    async with CodeMode([], limits=Limits(timeout_ms=60_000)) as mode:
        if ticks is None:
            return await mode.exec(code)

        async def ticker() -> None:
            while True:
                await asyncio.sleep(0.005)
                ticks.append(1)

        beat = asyncio.ensure_future(ticker())
        await asyncio.sleep(0)
        try:
            return await mode.exec(code)
        finally:
            beat.cancel()


def test_a_quick_cell_never_leaves_the_loop_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    _long_slices(monkeypatch)
    here, rest = _spy(monkeypatch)
    assert run(_exec("return 6 * 7;"))["value"] == 42
    assert here == [threading.current_thread().name] and rest == []


def test_a_start_that_computes_past_its_slice_finishes_on_a_guest_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    here, rest = _spy(monkeypatch)
    ticks: list[int] = []
    code = "const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; return 1;"
    assert run(_exec(code, ticks=ticks))["value"] == 1
    assert here == [threading.current_thread().name]
    assert len(rest) == 1 and rest[0].startswith("clawcell-guest-")
    assert len(ticks) >= 5  # the loop ran on while the cell computed (held: at most one tick)


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
        compiled.append(threading.current_thread().name)
        return compile_(self, code)

    monkeypatch.setattr(_guest.Guest, "compile", recording)
    assert run(_exec("return 2;"))["value"] == 2
    assert here == [] and rest == []
    assert len(compiled) == 1 and compiled[0].startswith("clawcell-guest-")
