"""The V8 executor: cells in V8 (Deno), out of process, in the OS sandbox. Opt-in.

QuickJS-on-wasmtime stays the default and the only executor whose parked cells can be
snapshotted; `V8Executor` is for cells that compute (sorting and joining large lists,
parsing big JSON, numeric loops), which V8's JIT runs tens of times faster. Model-written
code never runs in a V8 inside this process: each worker is a Deno process with no
permissions, inside bubblewrap when it works here (see `_v8_process`).

Workers are pooled per configuration, like QuickJS guests: a cell takes an idle worker
(whose next context the worker prepared while idle), and a new worker is started as a spare
whenever the pool runs low, so a warm cell pays a pipe round trip rather than a process
start. A worker that was killed (deadline, cancellation) or died (out of heap) is closed
and never handed out again. A worker serves any catalog (its next reset installs another),
so the idle workers of a closed executor wait on a process-wide shelf for the next one.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Final

from ..errors import RuntimeUnavailableError
from ._executor import ExecutorGuest, GuestConfig
from ._v8_guest import V8Guest
from ._v8_process import HEAP_OVERHEAD_MB, spawn

__all__ = ["V8Executor"]

_MIB: Final = 1024 * 1024
_CONTROLLER_PATH: Final = Path(__file__).with_name("controller.js")


class _Pool:
    """Idle workers of one configuration, and how to start another."""

    def __init__(self, config: GuestConfig, *, spares: int, max_idle: int, sandbox: bool) -> None:
        self.config = config
        self.heap_mb = math.ceil(config.memory_limit_bytes / _MIB) + HEAP_OVERHEAD_MB
        self.spares = spares
        self.max_idle = max_idle
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
                if guest.alive:
                    return guest
                guest.close()
        return self.shelved() or self.start()

    def shelved(self) -> V8Guest | None:
        """An idle worker of a closed executor, given this configuration, or `None`."""
        shelved = _SHELF.take(self.key)
        if shelved is not None and shelved.config != self.config.install_config:
            shelved.reset(self.config.install_config)
        return shelved

    def top_up(self) -> None:
        """Start spares until `spares` workers are idle (they boot in the background)."""
        while True:
            with self.lock:
                if len(self.idle) >= self.spares:
                    return
            guest = self.shelved() or self.start()  # a shelved worker costs no boot
            with self.lock:
                self.idle.append(guest)

    def give_back(self, guest: V8Guest) -> None:
        if not guest.alive or guest.interrupted:
            guest.close()
            return
        guest.reset()
        with self.lock:
            if len(self.idle) < self.max_idle and guest.alive:
                self.idle.append(guest)
                return
        guest.close()

    def close(self) -> None:
        """Put the idle workers on the process-wide shelf (beyond its room they end)."""
        with self.lock:
            idle, self.idle = self.idle, []
        for guest in idle:
            _SHELF.put(self.key, guest)


_Key = tuple[int, bool]


class _Shelf:
    """Idle workers of closed executors, by heap limit and sandbox, so that the next
    `CodeMode` starts warm (a worker is given another catalog with its next reset): up to
    `SHELF_WORKERS` per key for the `SHELF_KEYS` most recently used keys."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[_Key, list[V8Guest]] = OrderedDict()

    def take(self, key: _Key) -> V8Guest | None:
        with self._lock:
            idle = self._idle.get(key, [])
            while idle:
                guest = idle.pop(0)
                if guest.alive:
                    return guest
                guest.close()
        return None

    def put(self, key: _Key, guest: V8Guest) -> None:
        dropped: list[V8Guest] = []
        with self._lock:
            idle = self._idle.setdefault(key, [])
            self._idle.move_to_end(key)
            if guest.alive and len(idle) < SHELF_WORKERS:
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
    """Runs cells in pooled Deno worker processes (an `Executor`).

    Args:
        spares: Workers kept booted and idle beyond those in use, so the next cell starts
            warm (each costs a Deno process, about 40 MB).
        max_idle: Most idle workers kept per configuration; more are ended on release.
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

    def acquire(self, config: GuestConfig) -> V8Guest:
        """A worker of `config` with a pristine context ready."""
        pool = self._pools.get(config)
        if pool is None:
            for other in self._pools.values():
                other.close()
            pool = self._pools[config] = _Pool(
                config, spares=self._spares, max_idle=self._max_idle, sandbox=self._sandbox
            )
        guest = pool.take()
        guest.lent_from = pool
        # The taken worker may still work when no spare can start; the next acquire says why.
        with contextlib.suppress(RuntimeUnavailableError):
            pool.top_up()
        return guest

    def release(self, guest: ExecutorGuest) -> None:
        """Take back a worker whose cell is over (a killed or dead one is ended)."""
        if not isinstance(guest, V8Guest):
            return
        pool, guest.lent_from = guest.lent_from, None
        if isinstance(pool, _Pool) and pool in self._pools.values():
            pool.give_back(guest)
        elif pool is not None:
            guest.close()

    def close(self) -> None:
        """Put every idle worker on the process-wide shelf (the next executor over the same
        tools starts warm; the others end); idempotent, and the executor can still be used."""
        for pool in self._pools.values():
            pool.close()


_controller_text: list[str] = []


def _controller() -> str:
    if not _controller_text:
        _controller_text.append(_CONTROLLER_PATH.read_text("utf-8"))
    return _controller_text[0]
