"""Waiting for processes to end through pidfds (no polling of /proc), for the tests that kill
a host and check that nothing it started outlives it."""

from __future__ import annotations

import os
import select
import time

__all__ = ["wait_gone"]


def wait_gone(pids: list[int], deadline: float) -> list[int]:
    """The pids of `pids` still running at `deadline` (a `time.monotonic()` instant), each
    watched through a pidfd; a pid already gone counts as ended."""
    poller = select.poll()
    fds: dict[int, int] = {}
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        fds[fd] = pid
        poller.register(fd, select.POLLIN)
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                os.close(fd)
                del fds[fd]
        return sorted(fds.values())
    finally:
        for fd in fds:
            os.close(fd)
