"""The executor seam: `CodeMode(executor=…)` runs guests only through `runtime.Executor`.

A recording double wraps the default `QuickJSExecutor` and each guest it hands out, so the
tests see every call `CodeMode` makes across the seam.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.runtime import (
    EngineFailure,
    Executor,
    ExecutorGuest,
    GuestConfig,
    QuickJSExecutor,
    StepResult,
)
from clawcell.store import SQLiteStore
from tests.conftest import run

LATER = time.monotonic() + 3600
CONFIG = GuestConfig(
    memory_limit_bytes=64 * 1024 * 1024,
    install_config=json.dumps({"maxPending": 16, "bindings": []}),
)


class RecordingGuest:
    """An `ExecutorGuest` that records each call and passes it on."""

    def __init__(self, inner: ExecutorGuest, calls: list[str]) -> None:
        self.inner = inner
        self._calls = calls

    @property
    def lane(self) -> int:
        return self.inner.lane

    @property
    def snapshots(self) -> bool:
        return self.inner.snapshots

    @property
    def interrupted(self) -> bool:
        return self.inner.interrupted

    @property
    def has_unhandled_rejection(self) -> bool:
        return self.inner.has_unhandled_rejection

    @property
    def startup_s(self) -> float:
        return self.inner.startup_s

    def parse_cell(self, code: str, deadline: float) -> int | EngineFailure:
        self._calls.append("parse_cell")
        return self.inner.parse_cell(code, deadline)

    def run_segment(
        self, script: int | None, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure:
        self._calls.append("run_segment")
        return self.inner.run_segment(script, batch, deadline)

    def turn_here(self, batch: str | None, deadline: float) -> None:
        """Turns are not split here: every segment passes through `run_segment`."""
        del batch, deadline

    def first_here(self, code: str, deadline: float) -> None:
        """First segments are not begun here: `parse_cell` then `run_segment`."""
        del code, deadline

    def stop(self) -> None:
        self._calls.append("stop")
        self.inner.stop()

    def describe_rejection(self, deadline: float) -> str | EngineFailure | None:
        self._calls.append("describe_rejection")
        return self.inner.describe_rejection(deadline)

    def snapshot(self) -> bytes:
        self._calls.append("snapshot")
        return self.inner.snapshot()

    def snapshot_bound(self) -> int:
        return self.inner.snapshot_bound()

    def restore(self, blob: bytes) -> None:
        self._calls.append("restore")
        self.inner.restore(blob)


class RecordingExecutor:
    """An `Executor` double over the default one."""

    def __init__(self) -> None:
        self.inner = QuickJSExecutor()
        self.calls: list[str] = []
        self.configs: list[GuestConfig] = []

    def acquire(self, config: GuestConfig) -> ExecutorGuest:
        self.calls.append("acquire")
        self.configs.append(config)
        return RecordingGuest(self.inner.acquire(config), self.calls)

    def release(self, guest: ExecutorGuest) -> None:
        self.calls.append("release")
        assert isinstance(guest, RecordingGuest)
        self.inner.release(guest.inner)

    def close(self) -> None:
        self.calls.append("close")
        self.inner.close()


def test_the_default_executor_and_the_double_run_a_cell_through_the_protocol() -> None:
    executors: list[Executor] = [QuickJSExecutor(), RecordingExecutor()]  # pyright checks both
    for executor in executors:
        guest = executor.acquire(CONFIG)
        script = guest.parse_cell("return 1 + 1;", LATER)
        assert isinstance(script, int)
        report = guest.run_segment(script, None, LATER)
        assert isinstance(report, StepResult)
        assert report.value_json == "2"
        executor.release(guest)
        executor.close()


def test_a_cell_runs_through_the_executor_it_was_given() -> None:
    executor = RecordingExecutor()

    async def main() -> dict[str, Any]:
        async with CodeMode(executor=executor) as mode:
            return await mode.exec("return 6 * 7;")

    envelope = run(main())
    assert envelope["status"] == "completed"
    assert envelope["value"] == 42
    assert executor.calls == ["acquire", "parse_cell", "run_segment", "release", "close"]
    assert json.loads(executor.configs[0].install_config)["bindings"] == []


def test_a_syntax_error_gives_the_guest_back_without_running_it() -> None:
    executor = RecordingExecutor()

    async def main() -> dict[str, Any]:
        async with CodeMode(executor=executor) as mode:
            return await mode.exec("return 1 +;")

    envelope = run(main())
    assert (envelope["status"], envelope["code"]) == ("failed", "invalid_input")
    assert executor.calls == ["acquire", "parse_cell", "release", "close"]


def test_a_durable_park_snapshots_and_another_runtime_restores(tmp_path: Path) -> None:
    first, second = RecordingExecutor(), RecordingExecutor()
    path = tmp_path / "runs.db"

    async def main() -> dict[str, Any]:
        async with CodeMode(store=SQLiteStore(path), executor=first) as mode:
            parked = await mode.exec("await yield_control('later');\nreturn 'continued';")
        assert parked["status"] == "waiting"
        async with CodeMode(store=SQLiteStore(path), executor=second) as mode:
            return await mode.wait(parked["runId"])

    envelope = run(main())
    assert envelope["value"] == "continued"
    assert "snapshot" in first.calls
    assert "restore" not in first.calls
    assert second.calls[:2] == ["acquire", "restore"]
    assert second.calls[-2:] == ["release", "close"]


def test_the_quickjs_executor_hands_a_released_guest_out_again() -> None:
    executor = QuickJSExecutor()
    guest = executor.acquire(CONFIG)
    executor.release(guest)
    assert executor.acquire(CONFIG) is guest
    assert executor.acquire(CONFIG) is not guest
    executor.close()


def test_a_guest_released_twice_is_handed_out_once() -> None:
    executor = QuickJSExecutor()
    guest = executor.acquire(CONFIG)
    executor.release(guest)
    executor.release(guest)
    assert executor.acquire(CONFIG) is guest
    assert executor.acquire(CONFIG) is not guest
    executor.close()


class WatchedGuest(RecordingGuest):
    """A recording guest that says when each segment has really ended on its thread."""

    def __init__(self, inner: ExecutorGuest, calls: list[str]) -> None:
        super().__init__(inner, calls)
        self.ended = threading.Event()
        self.outcomes: list[StepResult | EngineFailure] = []

    def run_segment(
        self, script: int | None, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure:
        try:
            outcome = super().run_segment(script, batch, deadline)
            self.outcomes.append(outcome)
            return outcome
        finally:
            self.ended.set()


class WatchingExecutor(RecordingExecutor):
    def __init__(self) -> None:
        super().__init__()
        self.guests: list[WatchedGuest] = []

    def acquire(self, config: GuestConfig) -> ExecutorGuest:
        self.calls.append("acquire")
        self.guests.append(WatchedGuest(self.inner.acquire(config), self.calls))
        return self.guests[-1]


def test_cancelling_a_spinning_cell_stops_its_guest_rather_than_leaving_it_to_the_deadline() -> (
    None
):
    # The budget asked for is clamped to the largest, 60 s: a guest nobody stops keeps its
    # thread that long and then ends interrupted too, so the `stop` call is what the test
    # checks; the 2-minute wait below is only a hang guard.
    executor = WatchingExecutor()

    async def main() -> bool:
        async with CodeMode(executor=executor, limits=Limits(timeout_ms=600_000)) as mode:
            cell = asyncio.ensure_future(mode.exec("while (true) {}"))
            while "run_segment" not in executor.calls:
                await asyncio.sleep(0)
            cell.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await cell
            return await asyncio.to_thread(executor.guests[0].ended.wait, 120)

    assert run(main()) is True
    assert "stop" in executor.calls
    [outcome] = executor.guests[0].outcomes
    assert isinstance(outcome, EngineFailure)  # interrupted, as at a deadline
    assert executor.guests[0].interrupted
