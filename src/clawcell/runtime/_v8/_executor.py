"""The V8 executor: cells in V8 (Deno), out of process, in the OS sandbox. Opt-in.

QuickJS-on-wasmtime stays the default and the only executor whose parked cells can be
snapshotted; `V8Executor` is for cells that compute (sorting and joining large lists,
parsing big JSON, numeric loops), which V8's JIT runs tens of times faster. Model-written
code never runs in a V8 inside this process: each worker is a Deno process with no
permissions, inside bubblewrap when it works here (see `_v8._process`).

**A worker never runs cells of two sessions.** Every cell gets a fresh context of its own
realm, but the worker process (its isolate, its own realm, whatever a V8 or Deno bug would
let a cell reach) outlives the cell. So a worker that ran a cell (`used`) belongs to the
session of that cell: `CodeMode` asks for `session()`, a view of the executor whose workers
only its cells get, and which ends them when the `CodeMode` closes. Between the sessions
only *clean* workers are shared: booted, given a catalog, never handed a cell. They are the
spares: a session's first cell takes one (it boots none), and a new one starts in the
background, so a warm cell pays a pipe round trip rather than a process start; the next
cells of the session run in its own worker, each in a new context. The idle clean workers of
a closed executor wait on a process-wide shelf for the next one.

A worker that was killed (deadline, cancellation), died (out of heap) or is `suspect` (its
cell ended in a way that does not rule out tampering) is ended, never reused.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from ...errors import RuntimeUnavailableError
from .._controller import controller_source
from .._executor import ExecutorGuest, GuestConfig
from ._guest import V8Guest
from ._process import HEAP_OVERHEAD_MB, spawn

__all__ = ["V8Executor"]

_MIB: Final = 1024 * 1024


class _Pool:
    """Clean workers of one configuration (never handed a cell), and how to start another."""

    def __init__(self, config: GuestConfig, *, spares: int, sandbox: bool) -> None:
        self.config = config
        self.heap_mb = math.ceil(config.memory_limit_bytes / _MIB) + HEAP_OVERHEAD_MB
        self.spares = spares
        self.sandbox = sandbox
        self.idle: list[V8Guest] = []
        self.lock = threading.Lock()

    def start(self) -> V8Guest:
        process = spawn(self.heap_mb, sandbox=self.sandbox)
        guest = V8Guest(
            process,
            controller=_controller(),
            config=self.config.install_config,
            memory_limit=(self.heap_mb - HEAP_OVERHEAD_MB) * _MIB,
        )
        weakref.finalize(guest, guest.closer)
        return guest

    @property
    def key(self) -> _Key:
        return (self.heap_mb, self.sandbox)

    def take(self) -> V8Guest:
        with self.lock:
            while self.idle:
                guest = self.idle.pop(0)  # the longest idle: its next context is ready
                if guest.alive and not guest.used:
                    return guest
                guest.close()
        return self.shelved() or self.start()

    def shelved(self) -> V8Guest | None:
        """A clean worker of a closed executor, given this configuration, or `None`."""
        shelved = _SHELF.take(self.key)
        if shelved is not None and shelved.config != self.config.install_config:
            shelved.reset(self.config.install_config)
        return shelved

    def top_up(self) -> None:
        """Start spares until `spares` clean workers are idle (they boot in the background)."""
        while True:
            with self.lock:
                if len(self.idle) >= self.spares:
                    return
            guest = self.shelved() or self.start()  # a shelved worker costs no boot
            with self.lock:
                self.idle.append(guest)

    def close(self) -> None:
        """Put the clean idle workers on the process-wide shelf (beyond its room they end)."""
        with self.lock:
            idle, self.idle = self.idle, []
        for guest in idle:
            _SHELF.put(self.key, guest)


_Key = tuple[int, bool]


class _Shelf:
    """Clean idle workers of closed executors, by heap limit and sandbox, so that the next
    `CodeMode` starts warm (a worker is given another catalog with its next reset): up to
    `SHELF_WORKERS` per key for the `SHELF_KEYS` most recently used keys. A worker that ran a
    cell is never put here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[_Key, list[V8Guest]] = OrderedDict()

    def take(self, key: _Key) -> V8Guest | None:
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                guest = idle.pop(0)
                if guest.alive and not guest.used:
                    return guest
                guest.close()
        return None

    def put(self, key: _Key, guest: V8Guest) -> None:
        dropped: list[V8Guest] = []
        with self._lock:
            idle = self._idle.setdefault(key, [])
            self._idle.move_to_end(key)
            if guest.alive and not guest.used and len(idle) < SHELF_WORKERS:
                idle.append(guest)
            else:
                dropped.append(guest)
            while len(self._idle) > SHELF_KEYS:
                _, old = self._idle.popitem(last=False)
                dropped += old
        for extra in dropped:
            extra.close()

    def close(self) -> None:
        with self._lock:
            idle = [guest for guests in self._idle.values() for guest in guests]
            self._idle.clear()
        for guest in idle:
            guest.close()


SHELF_WORKERS: Final = 2
SHELF_KEYS: Final = 4
_SHELF = _Shelf()
atexit.register(_SHELF.close)


class V8Executor:
    """Runs cells in pooled Deno worker processes (an `Executor`), one session's cells per
    worker.

    The executor itself is one session: the workers its cells ran in serve only its later
    cells, and `close` ends them. `CodeMode` takes a `session()` of the executor it is given,
    so runtimes that share an executor share its spares, never a worker that ran a cell.

    Args:
        spares: Clean workers kept booted and idle beyond those in use, so a session's first
            cell starts warm (each costs a Deno process, about 40 MB).
        max_idle: Most idle workers a session keeps between its cells; more are ended.
        sandbox: Run workers inside bubblewrap when it works here (`False`: Deno's own
            permission sandbox only).

    Raises:
        RuntimeUnavailableError: (from `acquire`) Deno is not installed.
    """

    def __init__(self, *, spares: int = 1, max_idle: int = 4, sandbox: bool = True) -> None:
        self._spares = max(0, spares)
        self._max_idle = max(1, max_idle)
        self._sandbox = sandbox
        self._pools: dict[GuestConfig, _Pool] = {}
        self._own: list[V8Guest] = []
        """Idle workers that ran this session's cells, each with its next context ready."""
        self._generation = 0
        """How many times `close` ran: a worker lent before the last one ends on release."""
        self._lock = threading.Lock()

    def session(self) -> V8Executor:
        """An executor for one session: the same spares, workers of its own."""
        view = V8Executor(spares=self._spares, max_idle=self._max_idle, sandbox=self._sandbox)
        view._pools = self._pools  # shared: they hold clean workers only
        return view

    def acquire(self, config: GuestConfig) -> V8Guest:
        """A worker of `config` with a pristine context ready: one this session's cells ran
        in when one is idle, else a clean one."""
        guest = self._own_idle(config)
        if guest is not None:
            guest.lent_from = _Lease(self, self._generation, config)
            return guest
        pool = self._pools.get(config)
        if pool is None:
            for other in list(self._pools.values()):
                other.close()
            self._pools.clear()
            pool = self._pools[config] = _Pool(config, spares=self._spares, sandbox=self._sandbox)
        guest = pool.take()
        guest.lent_from = _Lease(self, self._generation, config)
        # The taken worker may still work when no spare can start; the next acquire says why.
        with contextlib.suppress(RuntimeUnavailableError):
            pool.top_up()
        return guest

    def _own_idle(self, config: GuestConfig) -> V8Guest | None:
        memory_limit = math.ceil(config.memory_limit_bytes / _MIB) * _MIB
        with self._lock:
            for guest in self._own:
                if guest.memory_limit == memory_limit:
                    self._own.remove(guest)
                    break
            else:
                return None
        if not guest.alive:
            guest.close()
            return self._own_idle(config)
        if guest.config != config.install_config:
            guest.reset(config.install_config)
        return guest

    def release(self, guest: ExecutorGuest) -> None:
        """Take back a worker whose cell is over: kept for this session's next cell, or
        ended (killed, dead, suspect, one too many, or not this executor's). A worker that
        is not lent out (taken back already) is ignored: ending it would end a worker the
        pool keeps idle, or one it has lent to another cell since."""
        if not isinstance(guest, V8Guest) or guest.lent_from is None:
            return
        lease, guest.lent_from = guest.lent_from, None
        if (
            not isinstance(lease, _Lease)
            or lease.executor is not self
            or lease.generation != self._generation
            or not guest.alive
            or guest.interrupted
            or guest.suspect
        ):
            guest.close()
            return
        guest.reset()
        if not guest.used:  # its cell never started (it did not parse): still clean
            pool = self._pools.get(lease.config)
            if pool is not None:
                with pool.lock:
                    if len(pool.idle) < self._max_idle:
                        pool.idle.append(guest)
                        return
        else:
            with self._lock:
                if len(self._own) < self._max_idle and guest.alive:
                    self._own.append(guest)
                    return
        guest.close()

    def close(self) -> None:
        """End this session's workers, idle ones now and lent ones when they come back; put
        the clean idle workers on the process-wide shelf (the next executor over the same
        tools starts warm). Idempotent; the executor can still be used after it."""
        with self._lock:
            own, self._own = self._own, []
            self._generation += 1
        for guest in own:
            guest.close()
        for pool in list(self._pools.values()):
            pool.close()


@dataclass(frozen=True)
class _Lease:
    """Who lent a worker out, before which `close`, for which configuration."""

    executor: V8Executor
    generation: int
    config: GuestConfig


_controller_text: list[str] = []


def _controller() -> str:
    if not _controller_text:
        _controller_text.append(controller_source())
    return _controller_text[0]
