"""Each guest keeps its own hard deadline on the engine-wide epoch (D8)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, cast

import pytest

from clawcell import CodeMode, Limits
from clawcell.runtime import Guest, compiled_reactor
from clawcell.runtime._wasm._backstop import TRAP_MESSAGE, Watchdog, run_slice
from clawcell.runtime._wasm._exports import GuestTrap
from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]
from tests.conftest import echo_tool, failure
from tests.runtime.wasm._calls import backstop

INSTALL = '{"maxPending":16,"bindings":[]}'
SORT = "const a = 'abcdefghij'.repeat(3e5).split(''); a.sort(); a.length"


def _guest() -> Guest:
    return Guest(compiled_reactor(), memory_limit_bytes=256 * 1024 * 1024, install_config=INSTALL)


def test_a_passed_hard_deadline_traps_while_another_guest_enters_and_leaves_backstops() -> None:
    sorter, busy = _guest(), _guest()
    trapped: list[BaseException] = []
    done = threading.Event()

    def sort() -> None:
        try:
            with backstop(sorter.instance, time.monotonic()):
                sorter.instance.eval(SORT)
        except GuestTrap as exc:
            trapped.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=sort)
    thread.start()
    while True:  # at least one round, however fast the other thread traps on a loaded machine
        with backstop(busy.instance, time.monotonic() + 3600):
            assert busy.instance.take_string(busy.instance.eval("1 + 1")) == "2"
        if done.is_set():
            break
    thread.join()
    assert len(trapped) == 1
    assert "interrupt" in str(trapped[0])


def test_an_epoch_bump_for_one_guest_does_not_trap_another() -> None:
    first, second = _guest(), _guest()
    with pytest.raises(GuestTrap), backstop(first.instance, time.monotonic()):
        first.instance.eval("for (;;) {}")
    with backstop(second.instance, time.monotonic() + 3600):
        assert second.instance.take_string(second.instance.eval("'fine'")) == "fine"


def test_an_earlier_deadline_wakes_the_watchdog_sleeping_toward_a_later_one() -> None:
    # The watchdog is woken only by a deadline earlier than the one it sleeps toward; the
    # spinning guest below is stopped by nothing else (the join is only a hang guard).
    far, near = _guest(), _guest()
    trapped: list[BaseException] = []

    def spin() -> None:
        try:
            with backstop(near.instance, time.monotonic() + 0.05):
                near.instance.eval("for (;;) {}")
        except GuestTrap as exc:
            trapped.append(exc)

    with backstop(far.instance, time.monotonic() + 3600):
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
        thread.join(120)
    assert len(trapped) == 1


def test_guest_thread_and_loop_thread_cells_keep_their_own_budgets() -> None:
    sorting = "const a = 'abcdefghij'.repeat(3e5).split('');\na.sort();\nreturn a.length;"
    chatty = "let n = 0;\nfor (let i = 0; i < 200; i++) n += (await echo({ i })).i;\nreturn n;"

    async def main() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        tight = Limits(timeout_ms=250, memory_limit_bytes=256 * 1024 * 1024)
        async with (
            CodeMode(limits=tight) as worker_mode,
            CodeMode([echo_tool()], limits=Limits(timeout_ms=60_000), guest_thread=False) as loop,
        ):
            sort_task = asyncio.ensure_future(worker_mode.exec(sorting))
            chats: list[dict[str, Any]] = []
            while not sort_task.done():
                chats.append(await loop.exec(chatty))
            return await sort_task, chats

    sorted_, chats = asyncio.run(main())
    assert failure(sorted_)[:3] == ("timeout", "guest", "code mode timeout exceeded")
    assert all(chat.get("value") == sum(range(200)) for chat in chats), chats


class _CountingEngine:
    def __init__(self) -> None:
        self.bumps = 0
        self.lock = threading.Lock()

    def increment_epoch(self) -> None:
        with self.lock:
            self.bumps += 1


def test_the_watchdog_misses_no_deadline_watched_from_many_threads_without_a_lock() -> None:
    # `watch` takes no lock on its fast path; every passed deadline must still bump the
    # epoch once, however the watchers interleave with the thread choosing its next wake-up.
    engine = _CountingEngine()
    watchdog = Watchdog(cast(Any, engine))
    per_thread, threads = 300, 4

    def watcher() -> None:
        for i in range(per_thread):
            now = time.monotonic()
            watchdog.watch(now - 1 if i % 2 else now + 0.001)
            if i % 50 == 0:
                watchdog.watch(now + 3600)  # a far deadline the thread sleeps toward

    workers = [threading.Thread(target=watcher) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    expected = threads * per_thread
    waited = 0
    # A hang guard only (two minutes, far beyond any machine's need): the count is the
    # assertion; a missed deadline leaves it short for good.
    while engine.bumps < expected and waited < 12_000:
        time.sleep(0.01)
        waited += 1
    assert engine.bumps == expected


def test_a_hard_deadline_passed_while_a_call_future_was_suspended_stops_it_once_resumed() -> None:
    """A turn or a first segment suspended at the end of its slice may wait for its guest
    thread (other cells' segments queued on the lane) past its hard deadline: the watchdog's
    one bump then comes while it is suspended. Wasmtime sets the next epoch deadline when
    the call resumes, from the epoch then, so that bump was lost and the resumed call ran on
    without a backstop (a long native operation, unbounded). It must trap at once."""
    instance = Instance(compiled_reactor(), memory_limit_bytes=64 << 20, interrupt=lambda: False)
    source = b"let n = 0; for (let i = 0; i < 3e6; i++) n += i % 7; n"
    ptr = instance.put_cstring(source)
    filename = instance._filename  # pyright: ignore[reportPrivateUsage]
    future = instance._f["JS_Eval"].start(instance.ctx, ptr, len(source), filename, 0)  # pyright: ignore[reportPrivateUsage]
    slice_over = time.monotonic()
    assert not run_slice(future, instance.hard_deadline, instance.reactor.watchdog, slice_over)
    instance.hard_deadline.at = 0.0  # the hard deadline passes while it waits ...
    instance.reactor.engine.increment_epoch()  # ... and the watchdog's one bump comes then
    failures: list[BaseException] = []

    def resume() -> None:
        while not future.poll():
            pass
        try:
            future.result()
        except GuestTrap as exc:
            failures.append(exc)

    worker = threading.Thread(target=resume)
    worker.start()
    worker.join()
    instance.hard_deadline.at = float("inf")
    assert len(failures) == 1 and TRAP_MESSAGE in str(failures[0])
    assert instance.store.future is None
