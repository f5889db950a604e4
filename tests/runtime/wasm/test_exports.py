"""`FastExport`, the path of every crossing into the reactor: arguments and results keep
their full 64 bits, and a raw value's tag reads as the signed high half. `CallFuture`, the
same call run as a wasmtime call future: it returns what the plain call returns, a suspended
one finishes on another thread, a store runs one at a time, a trap is a `GuestTrap`, a store
collected with one suspended frees it first, and no call is suspended inside a host
function."""

from __future__ import annotations

import ctypes
import gc
import json
import threading
import time

import pytest

from clawcell.runtime import Guest, compiled_reactor
from clawcell.runtime._wasm._backstop import (  # pyright: ignore[reportPrivateUsage]
    Pollable,
    run_slice,
)
from clawcell.runtime._wasm._capi import EngineError, capi  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._exports import CallFuture, GuestTrap  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._host_funcs import live_host_functions  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._wasm._instance import TAG_STRING, Instance, value_tag  # pyright: ignore[reportPrivateUsage]
from tests.conftest import in_forked_child
from tests.runtime.wasm._calls import bare_instance, eval_future

INSTALL = json.dumps({"maxPending": 16, "bindings": []})


@pytest.mark.parametrize(
    "value",
    [0, 1 << 32, 3 << 32, (2**32 - 7) << 32, 2**64 - 1, 0x8000_0000 << 32, 0x7FFF_FFFF << 32],
)
def test_a_tag_is_the_signed_high_half(value: int) -> None:
    assert value_tag(value) == ctypes.c_int32(value >> 32).value


def test_values_cross_both_ways_at_full_width() -> None:
    guest = Guest(compiled_reactor(), memory_limit_bytes=64 << 20, install_config=INSTALL)
    instance = guest.instance
    exports = instance._f  # pyright: ignore[reportPrivateUsage]
    string = instance.new_string("wide value: é")
    assert string >= 1 << 63 and value_tag(string) == TAG_STRING  # an i64 result, sign bit set
    assert exports["JS_DupValue"](instance.ctx, string) == string  # and as an argument
    instance.free_value(string)
    pointer = exports["malloc"](24)  # an i32 result
    assert 0 < pointer < 1 << 32
    exports["free"](pointer)
    assert instance.take_string(string) == "wide value: é"


# -- call futures -------------------------------------------------------------------------

LOOP = b"let n = 0; for (let i = 0; i < 3e6; i++) n += i % 7; n"


def _run_suspended(instance: Instance, future: CallFuture) -> bool:
    """Poll `future` with a slice that is already over, its epoch bump made here rather than
    by the watchdog's thread (no race with the call): False when it was suspended."""
    instance.reactor.engine.increment_epoch()
    return run_slice(future, instance.hard_deadline, instance.reactor.watchdog, time.monotonic())


def test_a_call_future_returns_what_the_plain_call_returns() -> None:
    instance = bare_instance()
    future = eval_future(instance, b"6 * 7")
    assert future.poll()
    assert instance.take_string(future.result()) == "42"
    assert instance.store.future is None  # freed once it returned: the store is free again
    assert instance.take_string(instance.eval("1 + 1")) == "2"


def test_a_suspended_call_finishes_on_another_thread() -> None:
    instance = bare_instance()
    future = eval_future(instance, LOOP)
    assert not _run_suspended(instance, future)  # the slice ended at once: suspended
    assert instance.store.future is future
    results: list[object] = []

    def finish() -> None:
        while not future.poll():
            pass
        results.append(instance.take_string(future.result()))

    worker = threading.Thread(target=finish)
    worker.start()
    worker.join()
    expected = str(sum(i % 7 for i in range(3_000_000)))
    assert results == [expected]


def test_a_store_runs_one_call_future_at_a_time() -> None:
    instance = bare_instance()
    future = eval_future(instance, LOOP)
    assert not _run_suspended(instance, future)
    with pytest.raises(EngineError, match="one call future at a time"):
        eval_future(instance, b"1")
    future.free()  # unwound where it was suspended
    assert instance.store.future is None
    again = eval_future(instance, b"2 + 3")
    assert again.poll() and instance.take_string(again.result()) == "5"


def test_a_trap_in_a_call_future_is_a_guest_trap() -> None:
    instance = bare_instance()
    future = eval_future(instance, LOOP)  # (its source staged before the deadline is armed)
    instance.arm_backstop(time.monotonic() - 1)  # the hard deadline passed: the next check traps
    instance.reactor.engine.increment_epoch()  # that check comes at once, not the watchdog's
    assert run_slice(future, instance.hard_deadline, instance.reactor.watchdog, float("inf"))
    with pytest.raises(GuestTrap, match="hard deadline"):
        future.result()


def test_a_store_collected_with_its_call_future_suspended_frees_the_future_first() -> None:
    gc.collect()
    before = live_host_functions()
    for _ in range(3):
        instance = bare_instance()
        future = eval_future(instance, LOOP)
        assert not _run_suspended(instance, future)
        del instance, future
        gc.collect()
        # the store was freed (its host function with it), the future first: the process
        # lives on and the next instance runs normally
        assert live_host_functions() == before
    assert eval_future(bare_instance(), b"1").poll()


def test_a_call_is_never_suspended_inside_a_host_function() -> None:
    """Guest code a host function calls runs in that function's frame: suspended there, the
    frame would be resumed on whichever thread polls next, with the first thread's Python
    state. So the epoch callback lets such a call run on, and the slice waits."""
    instance: Instance | None = None
    threads: list[tuple[int, int]] = []

    def interrupt() -> bool:
        assert instance is not None
        if not threads:
            instance.hard_deadline.slice_at = 0.0  # the slice is over ...
            instance.reactor.engine.increment_epoch()  # ... and the next check comes now
            before = threading.get_ident()
            dup = instance._f["JS_DupValue"]  # pyright: ignore[reportPrivateUsage]
            dup(instance.ctx, 0)  # a nested call: its entry checks the epoch
            threads.append((before, threading.get_ident()))
        return False

    instance = Instance(compiled_reactor(), memory_limit_bytes=64 << 20, interrupt=interrupt)
    future = eval_future(instance, LOOP)
    results: list[str] = []

    def finish() -> None:
        while not future.poll():
            pass
        results.append(instance.take_string(future.result()))

    if not future.poll():  # suspended, but not inside the host function
        worker = threading.Thread(target=finish)
        worker.start()
        worker.join()
    else:
        results.append(instance.take_string(future.result()))
    assert len(threads) == 1 and threads[0][0] == threads[0][1]
    assert results == [str(sum(i % 7 for i in range(3_000_000)))]


def test_a_slice_that_ends_inside_a_host_function_suspends_the_call_once_it_returns() -> None:
    """The watchdog bumps the epoch once per slice. When that one bump is first seen inside a
    host function (by guest code it calls), the callback must not suspend there; but the
    call must still be suspended at the first check after the host function returns, not run
    on to its end on the event loop's thread (and past the hard deadline the slice's watch
    stood in for)."""
    instance: Instance | None = None
    refused: list[bool] = []

    def interrupt() -> bool:
        assert instance is not None
        if not refused:
            instance.hard_deadline.slice_at = 0.0  # the slice is over ...
            instance.reactor.engine.increment_epoch()  # ... and its one bump comes now
            dup = instance._f["JS_DupValue"]  # pyright: ignore[reportPrivateUsage]
            dup(instance.ctx, 0)  # seen here first, inside the host function: refused
            refused.append(True)
        return False

    instance = Instance(compiled_reactor(), memory_limit_bytes=64 << 20, interrupt=interrupt)
    future = eval_future(instance, LOOP)
    # no watch of its own: nothing but the refused bump could end this slice
    assert not run_slice(future, instance.hard_deadline, instance.reactor.watchdog, float("inf"))
    assert refused == [True]
    while not future.poll():
        pass
    assert instance.take_string(future.result()) == str(sum(i % 7 for i in range(3_000_000)))


class _Interrupted(BaseException):
    """An exception the way a signal's handler raises one: at any bytecode."""


class _Raising:
    """What raises `_Interrupted` in a slice: its watch's token or the poll."""

    def __next__(self) -> int:
        raise _Interrupted

    def poll(self) -> bool:
        raise _Interrupted


def _raise(*_args: object) -> None:
    raise _Interrupted


@pytest.mark.parametrize("where", ["token", "wake-up", "poll"])
def test_a_slice_interrupted_anywhere_leaves_no_slice_behind(
    monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    instance = bare_instance()
    watchdog = instance.reactor.watchdog
    future = eval_future(instance, b"6 * 7")
    polled: Pollable = future
    if where == "token":
        monkeypatch.setattr(watchdog, "_tokens", _Raising())
    elif where == "wake-up":  # the watchdog's thread asleep for good: the slice wakes it
        monkeypatch.setattr(threading.Condition, "notify", _raise)
        monkeypatch.setattr(watchdog, "_sleeping_until", float("inf"))
    else:
        polled = _Raising()
    with pytest.raises(_Interrupted):
        run_slice(polled, instance.hard_deadline, watchdog, time.monotonic() + 60)
    monkeypatch.undo()
    assert instance.hard_deadline.slice_at == float("inf")
    assert watchdog._watched == {}  # pyright: ignore[reportPrivateUsage]
    future.free()


def test_a_synchronous_call_is_never_suspended() -> None:
    """Wasmtime fails a synchronous call its epoch callback answers with a yield (the guest
    then stops wherever it was, inside `malloc` say). Whatever is left of a slice, the
    callback suspends only a call future."""
    instance = bare_instance()
    instance.hard_deadline.slice_at = 0.0  # a slice that was never taken back ...
    instance.reactor.engine.increment_epoch()  # ... and an epoch check due
    assert instance.take_string(
        instance.eval("let q = 0; for (let i = 0; i < 1e5; i++) q += i; q")
    ) == str(sum(range(100_000)))


def _store_finalized_before_its_suspended_future() -> bytes:
    instance = bare_instance()
    future = eval_future(instance, LOOP)
    assert not _run_suspended(instance, future)
    store = instance.store
    # The collector clears weak references to garbage before it runs any finalizer, and
    # runs the finalizers of one batch in no set order: the store's may come first.
    store.future_ref = None
    store._release()  # pyright: ignore[reportPrivateUsage]
    future.free()
    return b"survived"


def test_a_store_finalized_before_its_suspended_call_future_frees_the_future_first() -> None:
    """Else the store is freed under a suspended call, whose unwinding (when the future is
    freed after it) reads the freed store: wasmtime aborts the process. In a forked child,
    so that a regression fails the test rather than ending the test run."""
    assert in_forked_child(_store_finalized_before_its_suspended_future) == b"survived"


def test_a_failure_never_read_is_not_the_next_call_s() -> None:
    """A call that trapped keeps its trap until `result` reads it; when an exception comes
    between `poll` and `result` (a signal's, at any bytecode), the next call on the export
    must not report that old trap as its own."""
    instance = bare_instance()
    future = eval_future(instance, LOOP)
    token = instance.arm_backstop(time.monotonic() - 1)
    instance.reactor.engine.increment_epoch()  # the check comes at once, not the watchdog's
    assert run_slice(future, instance.hard_deadline, instance.reactor.watchdog, float("inf"))
    instance.disarm_backstop(token)  # trapped; its `result` never read
    again = eval_future(instance, b"6 * 7")
    assert again is future  # the export's one call future, begun again
    assert again.poll()
    assert instance.take_string(again.result()) == "42"


def test_a_plain_call_s_trap_never_read_is_not_the_next_call_s() -> None:
    """The same for a plain call: a signal's exception right after the C call returns leaves
    its trap unread in the export's out-parameter."""
    instance = bare_instance()
    exports = instance._f  # pyright: ignore[reportPrivateUsage]
    stale = b"an earlier call's trap"
    exports["malloc"]._trap.value = capi().trap_new(stale, len(stale))  # pyright: ignore[reportPrivateUsage]
    pointer = exports["malloc"](16)
    assert pointer
    exports["free"](pointer)
