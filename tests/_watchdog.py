"""A watchdog for hung tests: once a test has run `CLAWCELL_TEST_WATCHDOG_S` seconds (150 by
default; `0` turns it off), the stack of every asyncio task of every event loop of the process
and of every thread is written to the terminal, once per test.

It fails nothing; it tells where a hung run waits, which a CI log otherwise never shows (a
debugger attached to the hung process crashed it: stop 46, whose hang was a PostgreSQL pool
worker that had swallowed its loop's cancellation). The tasks are read from asyncio's own
registry of every task of every loop, so loops in other threads (a test client's portal) are
included; their stacks are read while they run, which is good enough to see where they wait.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterable

import pytest

_LIMIT_S = float(os.environ.get("CLAWCELL_TEST_WATCHDOG_S", "150"))


def _all_tasks() -> list[asyncio.Task[object]]:
    """Every task of every loop (asyncio's private registry; 3.12 splits it in two)."""
    registries: list[Iterable[asyncio.Task[object]]] = [
        getattr(asyncio.tasks, name)
        for name in ("_all_tasks", "_scheduled_tasks", "_eager_tasks")
        if hasattr(asyncio.tasks, name)
    ]
    for _ in range(5):  # a registry may change size while it is copied
        try:
            return [task for registry in registries for task in list(registry)]
        except RuntimeError:
            continue
    return []


def stacks(title: str) -> str:
    """The stacks of every unfinished asyncio task and of every thread, under `title`."""
    out = io.StringIO()
    out.write(f"\n===== watchdog: {title}\n")
    for task in _all_tasks():
        if task.done():
            continue
        out.write(f"\n--- {task!r} (cancelling={task.cancelling()})\n")
        task.print_stack(limit=30, file=out)
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():  # pyright: ignore[reportPrivateUsage]
        out.write(f"\n--- thread {names.get(ident, ident)!r}\n")
        out.write("".join(traceback.format_stack(frame, limit=30)))
    return out.getvalue()


class Watchdog:
    """The plugin: times each test from its start and writes the stacks past the limit."""

    def __init__(self, config: pytest.Config, limit_s: float = _LIMIT_S) -> None:
        self._terminal = _terminal(config)
        self._limit_s = limit_s
        self._test: tuple[str, float] | None = None
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, name="clawcell-watchdog", daemon=True).start()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self._lock:
            self._test = (nodeid, time.monotonic())

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        with self._lock:
            self._test = None

    def _watch(self) -> None:
        while True:
            time.sleep(min(self._limit_s, 5.0))
            with self._lock:
                test = self._test
                overdue = test is not None and time.monotonic() - test[1] > self._limit_s
                if overdue:
                    self._test = None  # once per test
            if test is not None and overdue:
                self._write(stacks(f"{test[0]} has run over {self._limit_s:g} s"))

    def _write(self, text: str) -> None:
        os.write(self._terminal, text.encode("utf-8", "replace"))


def _terminal(config: pytest.Config) -> int:
    """A descriptor of the terminal's stderr, past pytest's capture: the copy its capture of
    descriptor 2 keeps (pytest's own attribute; descriptor 2 itself when nothing captures).
    Writing there leaves the capture's state alone (suspending it from this thread would race
    the test's own thread)."""
    capture = config.pluginmanager.getplugin("capturemanager")
    err = getattr(getattr(capture, "_global_capturing", None), "err", None)
    saved = getattr(err, "targetfd_save", None)
    return os.dup(saved if isinstance(saved, int) else 2)


def install(config: pytest.Config) -> None:
    """Register the watchdog unless `CLAWCELL_TEST_WATCHDOG_S` is 0; under pytest-xdist in
    the workers only (the controller runs no test: its stacks would say nothing)."""
    controller = bool(getattr(config.option, "numprocesses", None)) and (
        "PYTEST_XDIST_WORKER" not in os.environ
    )
    if _LIMIT_S > 0 and not controller:
        config.pluginmanager.register(Watchdog(config), "clawcell-watchdog")
