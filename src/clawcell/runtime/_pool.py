"""Pools of ready guests, shared by every runtime of the process with the same configuration.

Each guest carries its catalog's bindings in its pristine image, so a new cell costs one
in-place image reset. Guests are keyed by their *configuration* (heap limit and install
configuration: the bindings, MCP servers and pending-call cap): a `GuestPool` takes idle
guests from the process-wide shelf of its key first, and `close()` puts its idle guests back
there, so a new `CodeMode` over the same tools starts its first cell on a warm guest instead
of building one (about 6 ms). The first guest of a key is built from scratch (controller,
bindings); later ones start as copies of its pristine image (about 3 ms instead of 6), which
also replaces guests dropped because their memory grew.

A cell holds its guest from `exec` until it completes, fails or parks; concurrent cells get
separate guests. A pool keeps up to `max_idle` idle guests (128 by default), so a burst of
concurrent cells finds warm guests the next time instead of building each one again (a
guest costs about 2.6 MiB and 2 ms to build); idle guests beyond `SHELF_GUESTS` are dropped
once unused for `KEEP_WARM_S`. The shelf keeps `SHELF_GUESTS` per key and the `SHELF_KEYS`
most recently used keys.

Every acquired guest is put on the guest thread (`lane`) that carries the fewest guests in
use in the whole process, so concurrent cells spread over the cores whichever idle guests
they were given; a guest keeps its lane for the whole cell (every segment runs there).

A guest released while an event loop runs is put away (its lane freed, the pages its cell
touched in the image's zero runs dropped, then idle) by a timer of that loop due at once, so
in the loop's next iteration, after the leg's envelope went back to its caller; an `acquire`
before then takes it back as it is, on its lane, so a runtime that runs cell after cell pays
for neither. Without a running loop, or
when the pool closes, it is put away at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import field
from typing import Final

from .._lazy import record_class
from ..errors import RuntimeUnavailableError
from ._guest import Guest
from ._process import PerProcess, fork_count
from ._wasm._engine import compiled_reactor
from ._wasm._stacks import drop_pages
from ._worker import guest_lanes

__all__ = ["KEEP_WARM_S", "SHELF_GUESTS", "SHELF_KEYS", "GuestPool"]

SHELF_GUESTS: Final = 4
SHELF_KEYS: Final = 8
KEEP_WARM_S: Final = 30.0

_Key = tuple[int, str]


@record_class
class _Shelf:
    """A configuration's template guest and its idle guests."""

    template: Guest | None = None
    idle: list[Guest] = field(default_factory=list[Guest])


class _Shelves:
    """The process-wide idle guests and templates, by configuration (one per process: a
    forked child starts empty, the parent's instances belong to its engine)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shelves: OrderedDict[_Key, _Shelf] = OrderedDict()

    def shelf(self, key: _Key) -> _Shelf:
        with self._lock:
            shelf = self._shelves.setdefault(key, _Shelf())
            self._shelves.move_to_end(key)
            while len(self._shelves) > SHELF_KEYS:
                self._shelves.popitem(last=False)
            return shelf

    def take(self, key: _Key) -> Guest | None:
        shelf = self.shelf(key)
        with self._lock:
            return shelf.idle.pop() if shelf.idle else None

    def put(self, key: _Key, guests: list[Guest]) -> None:
        shelf = self.shelf(key)
        with self._lock:
            room = SHELF_GUESTS - len(shelf.idle)
            shelf.idle.extend(guests[: max(room, 0)])


_SHELVES = PerProcess(_Shelves)


class _LaneLoad:
    """Which lane each guest in use runs on, process-wide (dropped guests leave by weakref).

    A plain dict keyed by weak references, not a `WeakKeyDictionary`: this runs twice per
    `exec`, and the latter's iteration guard and removal queue were most of its cost. A
    reference whose guest is gone removes itself; a guest's reference is found again by
    `weakref.ref(guest)`, which compares equal to it while the guest lives.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lanes = guest_lanes()
        self._held: dict[weakref.ref[Guest], int] = {}

    def assign(self, guest: Guest) -> None:
        """Put `guest` on the least busy lane (the lowest such lane on a tie)."""
        with self._lock:
            busy = [0] * self._lanes  # a list, not a `Counter`: this runs on every `exec`
            for lane in list(self._held.values()):  # a copy: a gone guest may leave meanwhile
                busy[lane] += 1
            guest.lane = busy.index(min(busy))
            self._held[weakref.ref(guest, self._gone)] = guest.lane

    def free(self, guest: Guest) -> None:
        with self._lock:
            self._held.pop(weakref.ref(guest), None)

    def _gone(self, reference: weakref.ref[Guest]) -> None:
        # Called by the collector, maybe on a thread that holds the lock: no lock here (one
        # dict operation is atomic).
        self._held.pop(reference, None)


_LOAD = PerProcess(_LaneLoad)


class GuestPool:
    """Hands out guests with the same configuration."""

    def __init__(
        self, *, memory_limit_bytes: int, install_config: str, max_idle: int = 128
    ) -> None:
        self._memory_limit_bytes = memory_limit_bytes
        self._install_config = install_config
        self._key: _Key = (memory_limit_bytes, install_config)
        self._idle: list[Guest] = []  # most recently released last
        self._released_at: list[float] = []
        self._max_idle = max_idle
        self._forks = fork_count()
        self._parting: list[Guest] = []
        """Released guests not put away yet (their lanes still held), most recent last."""
        self._parting_loop: asyncio.AbstractEventLoop | None = None
        """The loop whose callback puts `_parting` away (`None`: no callback pending)."""

    def acquire(self) -> Guest:
        """A guest that starts its next cell from its pristine image (from this pool, the
        shelf, or new); a reused guest restores the image in its first segment (a copy bounded
        by the image: a guest whose memory grew is never reused, see `release`)."""
        if self._forks != fork_count():  # forked: the parent's guests belong to its engine
            self._idle, self._released_at, self._forks = [], [], fork_count()
            self._parting, self._parting_loop = [], None
        if self._parting:  # released in this loop step: still on its lane, not shed
            guest = self._parting.pop()
            guest.reset_soon()
            return guest
        self._trim()
        guest = self._take_idle() or _SHELVES.get().take(self._key)
        if guest is not None:
            guest.reset_soon()
        else:
            guest = self._build()
        _LOAD.get().assign(guest)
        return guest

    def _build(self) -> Guest:
        """A new guest, pristine already: a copy of its configuration's template, if any."""
        shelf = _SHELVES.get().shelf(self._key)
        guest = self._build_from(shelf.template)
        if shelf.template is None:
            shelf.template = guest  # later guests start as copies of its pristine image
        return guest

    def release(self, guest: Guest) -> None:
        """Return a guest whose cell is over; it is reset before its next use.

        A guest whose memory grew (see `Instance.grown`) is dropped, and so is one whose store
        still has a call future (a turn begun and never finished, see `runtime._crossing`):
        the future is unwound first, so the store is never used beside it. A `retired` guest
        (not reset, or stopped: its segment may still be finishing on its lane) is dropped
        untouched. Either way its lane is freed at once.
        Inside a running event loop a reusable guest is put away from a callback of the loop
        (see the module's docstring).
        """
        if not guest.retired and guest.instance.store.future is not None:
            guest.instance.store.future.free()
            guest.retired = True
        if guest.retired or guest.instance.grown:
            _LOAD.get().free(guest)
            self._replace_template(guest)
            self._trim()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._put_away([guest])
            return
        self._parting.append(guest)
        if self._parting_loop is not loop:  # one callback pending at a time (or a closed loop's)
            self._parting_loop = loop
            # A timer, not `call_soon`: a ready callback would make the next segment's
            # guest-thread hand-off take its slow path (`runtime._worker`).
            loop.call_later(0, self._put_away_parting)

    def _put_away_parting(self) -> None:
        parting, self._parting, self._parting_loop = self._parting, [], None
        self._put_away(parting)

    def _put_away(self, guests: list[Guest]) -> None:
        """Free the lanes of released `guests` and keep them idle (dropped beyond `max_idle`)."""
        load = _LOAD.get()
        for guest in guests:
            load.free(guest)
            if len(self._idle) < self._max_idle:
                guest.shed()
                drop_pages(guest.instance.store)
                self._idle.append(guest)
                self._released_at.append(time.monotonic())
        self._trim()

    def _replace_template(self, dropped: Guest) -> None:
        """A dropped guest that is its shelf's template would keep its grown memory alive
        for the life of the process: a copy of its pristine image takes its place."""
        shelf = _SHELVES.get().shelf(self._key)
        if shelf.template is not dropped:
            return
        shelf.template = None
        try:
            successor = self._build_from(dropped)
        except (RuntimeUnavailableError, MemoryError, OSError):  # a release never raises
            return  # the next guest of this key is built from scratch and becomes the template
        shelf.template = successor
        if len(self._idle) < self._max_idle:
            self._idle.append(successor)
            self._released_at.append(time.monotonic())

    def _build_from(self, template: Guest | None) -> Guest:
        return Guest(
            compiled_reactor(),
            memory_limit_bytes=self._memory_limit_bytes,
            install_config=self._install_config,
            template=template,
        )

    def _take_idle(self) -> Guest | None:
        if not self._idle:
            return None
        self._released_at.pop()
        return self._idle.pop()

    def _trim(self) -> None:
        """Drop the oldest idle guests beyond `SHELF_GUESTS` unused for `KEEP_WARM_S`."""
        cutoff = time.monotonic() - KEEP_WARM_S
        while len(self._idle) > SHELF_GUESTS and self._released_at[0] < cutoff:
            del self._idle[0], self._released_at[0]

    def close(self) -> None:
        """Put idle guests back on the process-wide shelf; idempotent."""
        if self._forks == fork_count():
            self._put_away_parting()
            _SHELVES.get().put(self._key, self._idle[::-1])
        self._idle, self._released_at = [], []
        self._parting, self._parting_loop = [], None
