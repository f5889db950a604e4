"""The stacks call futures run on (`runtime/_wasm/_stacks.py`): the store whose first call
future needs one claims it; the pages a deep call touched are given back when the guest goes
idle, all but the stack's top; never while a call runs on it; a call after that runs as
before; a freed store's stack is unmapped."""

from __future__ import annotations

import gc
import mmap
import sys
from typing import NoReturn

import pytest

from clawcell.runtime import GuestPool, compiled_reactor
from clawcell.runtime._failure import engine_failure  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm import _stacks  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._backstop import run_slice  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._exports import GuestTrap  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._stacks import KEEP_RESIDENT, drop_pages, resident_pages  # pyright: ignore[reportPrivateUsage]
from tests.conftest import in_forked_child
from tests.runtime.wasm._calls import bare_instance, eval_future

INSTALL = '{"maxPending":1,"bindings":[],"test":"stacks"}'
# nested arrays stringified: native recursion down most of the wasm stack, without a trap
DEEP = b"let o = []; for (let i = 0; i < 6000; i++) o = [o]; JSON.stringify(o).length"
DEEP_VALUE = "12002"
KEPT_PAGES = KEEP_RESIDENT // mmap.PAGESIZE


def _run(instance: Instance, source: bytes) -> str:
    future = eval_future(instance, source)
    while not future.poll():
        pass
    return instance.take_string(future.result())


def test_the_first_call_future_claims_the_stack_it_runs_on() -> None:
    instance = bare_instance()
    assert instance.store.fiber_stack == 0
    assert _run(instance, b"6 * 7") == "42"
    key = instance.store.fiber_stack
    assert key != 0
    assert _run(instance, b"1 + 1") == "2"
    assert instance.store.fiber_stack == key  # the store keeps it between calls
    assert 0 < resident_pages(instance.store) <= KEPT_PAGES


def test_a_deep_call_s_pages_are_given_back_when_its_guest_goes_idle_but_the_top() -> None:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL)
    guest = pool.acquire()
    store = guest.instance.store
    assert _run(guest.instance, DEEP) == DEEP_VALUE
    deep = resident_pages(store)
    assert deep * mmap.PAGESIZE > 1024 * 1024  # the call went down more than 1 MiB
    pool.release(guest)  # outside an event loop: put away at once
    assert resident_pages(store) <= KEPT_PAGES
    again = pool.acquire()
    assert again is guest
    again.reset()
    assert _run(again.instance, DEEP) == DEEP_VALUE  # the pages come back, zeroed, as needed
    pool.release(again)


def test_a_stack_a_call_runs_on_keeps_its_pages() -> None:
    instance = bare_instance()
    assert _run(instance, DEEP) == DEEP_VALUE
    future = eval_future(instance, b"let n = 0; for (let i = 0; i < 1e8; i++) n += i; n")
    assert not run_slice(future, instance.hard_deadline, instance.reactor.watchdog, 0.0)
    deep = resident_pages(instance.store)
    drop_pages(instance.store)  # suspended on the stack: left alone
    assert resident_pages(instance.store) == deep > KEPT_PAGES
    future.free()
    drop_pages(instance.store)
    assert resident_pages(instance.store) <= KEPT_PAGES


def test_a_freed_store_s_stack_is_unmapped() -> None:
    gc.collect()
    before = len(_stacks._stacks)  # pyright: ignore[reportPrivateUsage]
    instance = bare_instance()
    assert _run(instance, b"1") == "1"
    assert len(_stacks._stacks) == before + 1  # pyright: ignore[reportPrivateUsage]
    del instance
    gc.collect()
    assert len(_stacks._stacks) == before  # pyright: ignore[reportPrivateUsage]


def test_a_stack_that_cannot_be_mapped_fails_the_call_as_out_of_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(size: int) -> NoReturn:
        raise MemoryError(f"no {size} bytes today")

    monkeypatch.setattr(_stacks, "_Stack", refused)
    instance = bare_instance()
    future = eval_future(instance, b"6 * 7")
    assert future.poll()  # it ended: without a stack, at once
    with pytest.raises(GuestTrap) as raised:
        future.result()
    failure = engine_failure(raised.value, deadline=float("inf"))
    assert failure.kind == "out_of_memory"
    assert "could not map a stack" in failure.message
    monkeypatch.undo()
    assert _run(instance, b"6 * 7") == "42"  # the next call gets its stack


class _Nested:
    def __init__(self, inner: _Nested | None) -> None:
        self.inner = inner

    def __repr__(self) -> str:  # C -> Python -> C: each level takes native stack
        return f"N({self.inner!r})"


HOST_RECURSION_LIMIT = 5000
"""Five times Python's default: what a host function (or a finalizer the collector runs in
it) may reach below the guest's deepest frames."""


def _recursion_limit_at_the_deepest() -> bytes:
    sys.setrecursionlimit(HOST_RECURSION_LIMIT)  # in the forked child only
    chain: _Nested | None = None
    for _ in range(HOST_RECURSION_LIMIT):
        chain = _Nested(chain)
    limited: list[bool] = []

    def interrupt() -> bool:
        try:
            repr(chain)
        except RecursionError:
            limited.append(True)
        return False

    instance = Instance(compiled_reactor(), memory_limit_bytes=256 << 20, interrupt=interrupt)
    # stringified 6,000 arrays deep, each `toJSON` at the bottom runs long enough for the
    # interrupt handler to be called there
    deep = (
        b"let o = { toJSON() { let s = 0; for (let i = 0; i < 1e5; i++) s += i; return s; } };"
        b" for (let i = 0; i < 6000; i++) o = [o]; JSON.stringify(o).length"
    )
    value = _run(instance, deep)
    return f"{value} {bool(limited)}".encode()


def test_host_python_reaches_its_recursion_limit_below_the_guest_s_deepest_frames() -> None:
    """A host function runs on the call future's stack, below the guest's frames: there it
    must have the room to reach a recursion limit well above Python's default (a
    RecursionError, not a crash; in a forked child, so that a crash fails the test rather
    than ending the test run)."""
    assert in_forked_child(_recursion_limit_at_the_deepest) == b"12010 True"
