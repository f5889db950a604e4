"""How a guest thread and the loop thread wake each other: a pipe one way, a doorbell the
other (see `_worker`, whose hand-off they carry)."""

from __future__ import annotations

import contextlib
import os
import select
import sys
from typing import Any, Final

__all__ = ["DRAIN", "WAKE", "Doorbell", "pipe"]

WAKE: Final = b"\0"
"""The byte written to wake a reader."""
ONE: Final = (1).to_bytes(8, sys.byteorder)
"""One, as the native 64-bit count an eventfd is written."""
DRAIN: Final = 4096
"""How many wake-ups a reader takes back at once."""


def pipe() -> tuple[int, int]:
    """A pipe whose write end never blocks (a full pipe already wakes its reader)."""
    read, write = os.pipe()
    os.set_blocking(write, False)
    return read, write


class Doorbell:
    """How guest threads tell a waiting loop thread that a job finished.

    On Linux an eventfd watched edge-triggered by epoll: every `ring` is one event, so a
    wait is a single `epoll_wait` and nothing is ever read back (the counter is never read;
    it cannot fill up). Elsewhere a pipe: `poll`, then read the wake-ups back.
    """

    def __init__(self) -> None:
        eventfd = getattr(os, "eventfd", None)
        epoll = getattr(select, "epoll", None)
        if eventfd is not None and epoll is not None:
            self.fd: int = eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            self._bell = ONE
            self._edges: Any = epoll()
            self._edges.register(self.fd, select.EPOLLIN | select.EPOLLET)
            self._read, self._unit = -1, 1.0  # epoll's timeout is in seconds
        else:  # pragma: no cover - not Linux
            self._read, self.fd = pipe()
            os.set_blocking(self._read, False)
            self._bell = WAKE
            self._edges = select.poll()
            self._edges.register(self._read, select.POLLIN)
            self._unit = 1000.0  # poll's, in milliseconds

    def ring(self) -> None:
        """Wake a waiting thread. `os.write` lets go of the GIL before the system call."""
        try:  # noqa: SIM105 - `contextlib.suppress` costs three calls on every round trip
            os.write(self.fd, self._bell)
        except BlockingIOError:  # pragma: no cover - a pipe full of wake-ups wakes anyway
            pass

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for a ring since the last wait returned: whether one came.
        A ring may be for a job another wait gave up on: callers check their own job."""
        rung = bool(self._edges.poll(seconds * self._unit))
        if rung and self._read >= 0:  # pragma: no cover - not Linux
            with contextlib.suppress(BlockingIOError):  # another thread's loop read them first
                os.read(self._read, DRAIN)
        return rung
