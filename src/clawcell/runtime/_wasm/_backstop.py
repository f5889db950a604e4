"""Per-guest hard deadlines on the engine-wide epoch (the backstop behind the interrupt
handler).

Threat model: a guest may spend its whole budget in one native operation (a huge sort, a
BigInt multiplication) where the QuickJS interrupt handler never runs. Wasmtime checks the
engine's epoch at loop headers and function entries; the watchdog thread bumps it when the
earliest watched hard deadline passes. The epoch is shared by every store of the engine, so
the bump alone decides nothing: each store's epoch-deadline callback compares the clock with
*its own* hard deadline and traps only when that has passed, otherwise it continues. Guests on
several threads, or on the loop thread beside the guest threads, therefore never cancel or
trigger each other's backstop (D8).

The callback is one C function for the whole process; each store passes the key of its
`HardDeadline` as the callback's data, and the store's finalizer removes the key, so the
registry never holds a guest.

The interrupt handler itself (`interrupt_handler`) is QuickJS's: it runs about every 10,000
interpreter ticks and stops the guest with an uncatchable `InternalError: interrupted`.

Slices: a call future (`_exports.CallFuture`) run on the event loop's thread is given a
slice (`HardDeadline.slice_at`, watched like a deadline). When the slice is over, the
callback suspends the call (`UPDATE_DEADLINE_YIELD`) rather than trapping, and the caller
moves it to a guest thread (`runtime._crossing`). It never suspends a call inside a host
function's frame (`in_host_function`): that frame would then be resumed on another thread.
The watchdog bumps the epoch once per slice, so when that bump is first seen inside a host
function (guest code it calls checks the epoch too), the callback sets the store's deadline
to the current epoch: every later check calls it again, and the first one outside the host
function suspends the call. (A deadline one epoch ahead would wait for a bump that may never
come: the call would run on the loop thread to its end, past the hard deadline the slice's
watch stands in for.)
The callback is only ever asked to suspend a call future: `slice_at` is set only while one is
polled (and taken back whatever `run_slice` raises), and the callback suspends nothing while
its store runs no call future (`HardDeadline.suspendable`), so a synchronous call never sees
a yield, which wasmtime would fail wherever the guest was (inside `malloc`, say).
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Final, Protocol

from ._capi import (
    EPOCH_CALLBACK,
    FINALIZER,
    UPDATE_DEADLINE_CONTINUE,
    UPDATE_DEADLINE_YIELD,
    capi,
)
from ._handles import Engine, Store
from ._host_funcs import in_host_function, keep_host_exception

__all__ = [
    "CALLBACK_FAILED",
    "INTERRUPT_SIGNATURE",
    "TRAP_MESSAGE",
    "HardDeadline",
    "Pollable",
    "Watchdog",
    "install_backstop",
    "interrupt_handler",
    "run_slice",
]

TRAP_MESSAGE: Final = "wasm trap: interrupt (the hard deadline of this guest passed)"


class HardDeadline:
    """The `time.monotonic()` instant after which this store's guest code traps (`at`), and
    the one after which its call future is suspended (`slice_at`: see the module's
    docstring)."""

    __slots__ = ("_store", "at", "slice_at")

    def __init__(self, store: Store) -> None:
        self.at = float("inf")
        self.slice_at = float("inf")
        self._store = weakref.ref(store)

    def suspendable(self) -> bool:
        """Whether the store runs a call future (only one may be suspended: wasmtime fails
        a synchronous call its callback answers with a yield)."""
        store = self._store()
        return store is not None and store.future is not None


_NEVER: Final = float("inf")
_deadlines: dict[int, HardDeadline] = {}
_keys = itertools.count(1)
_TRAP_BYTES: Final = TRAP_MESSAGE.encode()
CALLBACK_FAILED: Final = "wasm trap: interrupt (the epoch deadline check raised a Python exception)"
_FAILED_BYTES: Final = CALLBACK_FAILED.encode()


@EPOCH_CALLBACK
def _on_epoch(_ctx: Any, data: int | None, delta: Any, kind: Any) -> int:
    # C reads the returned pointer: an exception escaping here would hand it an undefined
    # one (ctypes prints the exception and returns whatever the result slot held), so any
    # failure traps the guest instead, which is the safe side of a deadline.
    try:
        deadline = _deadlines.get(data or 0)
        delta[0] = 1
        kind[0] = UPDATE_DEADLINE_CONTINUE
        if deadline is not None:
            now = time.monotonic()
            if now >= deadline.at:
                return capi().error_new(_TRAP_BYTES) or 0
            if now >= deadline.slice_at and deadline.suspendable():
                if in_host_function():
                    # Not here; but the slice's one bump is spent: check again at once,
                    # so the call is suspended at its first check outside the host function.
                    delta[0] = 0
                else:
                    deadline.slice_at = _NEVER
                    kind[0] = UPDATE_DEADLINE_YIELD
                    # Wasmtime sets the next deadline when the call resumes, from the epoch
                    # then: a bump while it was suspended (the hard deadline's one, say, as
                    # it waits for a guest thread) would be lost. Ask again at once instead.
                    delta[0] = 0
        return 0
    except BaseException as exc:
        keep_host_exception(exc)  # the `GuestTrap`'s cause
        return capi().error_new(_FAILED_BYTES) or 0


@FINALIZER
def _forget(key: int | None, _table: dict[int, Any] = _deadlines) -> None:
    # The registry is bound here: a store freed while the interpreter exits may run this
    # after the module's globals are cleared.
    _table.pop(key or 0, None)


def install_backstop(store: Store) -> HardDeadline:
    """Route `store`'s epoch deadline through its own `HardDeadline` (returned)."""
    deadline = HardDeadline(store)
    key = next(_keys)
    _deadlines[key] = deadline
    store.keep(_on_epoch, _forget)  # C calls them as long as the store lives
    capi().store_epoch_deadline_callback(store.ptr, _on_epoch, key, _forget)
    store.set_epoch_deadline(1)
    return deadline


class Watchdog:
    """Bumps the engine epoch whenever the earliest watched hard deadline passes.

    `watch` and `unwatch` run once per guest segment, so they take no lock: each is one
    dictionary operation (atomic under the GIL) and a comparison with the instant the
    watchdog thread wakes by itself. Only a deadline earlier than that instant, or one
    watched while the thread is choosing its next instant (`_sleeping_until` is then
    `-inf`), takes the lock to wake it; either way the thread reads every deadline again
    before it sleeps, so none is missed.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._cond = threading.Condition(threading.Lock())
        self._watched: dict[int, float] = {}
        self._sleeping_until = float("inf")
        """When the watchdog thread wakes next by itself (`-inf` while it is choosing)."""
        self._tokens = itertools.count(1)
        self._thread = threading.Thread(target=self._run, name="clawcell-watchdog", daemon=True)
        self._thread.start()

    def watch(self, deadline: float) -> int:
        """Bump the epoch at `deadline` unless `unwatch(token)` comes first."""
        token = next(self._tokens)
        self._watched[token] = deadline
        if deadline < self._sleeping_until:
            with self._cond:
                self._cond.notify()
        return token

    def unwatch(self, token: int) -> None:
        self._watched.pop(token, None)

    def run_slice(self, future: Pollable, deadline: HardDeadline, until: float) -> bool:
        """`run_slice(future, deadline, self, until)`, the module's function: the watch and
        the unwatch inline, since a call-heavy cell runs one slice per tool call."""
        watched = self._watched
        token = 0
        try:
            deadline.slice_at = until
            token = next(self._tokens)
            watched[token] = until
            if until < self._sleeping_until:
                with self._cond:
                    self._cond.notify()
            return future.poll()
        finally:
            deadline.slice_at = _NEVER  # first: an exception below must not leave a slice set
            watched.pop(token, None)

    def _run(self) -> None:
        with self._cond:
            while True:
                self._sleeping_until = float("-inf")
                watched = self._snapshot()
                if not watched:
                    self._sleeping_until = float("inf")
                    self._cond.wait()
                    continue
                token = min(watched, key=watched.__getitem__)
                deadline = watched[token]
                remaining = deadline - time.monotonic()
                if remaining > 0:
                    self._sleeping_until = deadline
                    # An infinite deadline is never reached; `wait` takes at most TIMEOUT_MAX.
                    self._cond.wait(min(remaining, threading.TIMEOUT_MAX))
                    continue
                self._watched.pop(token, None)
                self._engine.increment_epoch()

    def _snapshot(self) -> dict[int, float]:
        """A consistent copy of the watched deadlines, taken while other threads change them.

        `dict.copy` copies without allocating per entry, so no garbage collection (which may
        run finalizers and so switch threads) interrupts it; should a copy still see the
        dictionary change, it is taken again rather than letting the thread die.
        """
        while True:
            try:
                return self._watched.copy()
            except RuntimeError:  # changed size during the copy
                continue


def run_slice(future: Pollable, deadline: HardDeadline, watchdog: Watchdog, until: float) -> bool:
    """Poll `future` (of the store `deadline` belongs to) on this thread until it returns
    (True) or, past `until` (`time.monotonic()`), is suspended at its next epoch check
    (False: poll it again, from any thread). The watchdog bumps the epoch at `until`, so
    guest code inside a long native operation is suspended too."""
    return watchdog.run_slice(future, deadline, until)


class Pollable(Protocol):
    """A call future (`_exports.CallFuture`), as a slice runs it."""

    def poll(self) -> bool: ...


INTERRUPT_SIGNATURE: Final = (("i32", "i32"), ("i32",))
"""The wasm type of QuickJS's interrupt callback."""


def interrupt_handler(interrupt: Callable[[], bool]) -> Callable[[int, int], int]:
    """QuickJS's interrupt callback: `(rt, opaque) -> 1` stops the guest."""

    def handler(_rt: int, _opaque: int) -> int:
        return 1 if interrupt() else 0

    return handler
