"""Process-wide singletons that a forked child rebuilds instead of inheriting.

Threads do not survive `fork`: a child that reused the parent's watchdog or guest worker
would wait on threads that no longer exist. A `PerProcess` value is created on first use in
each process. `get` runs on every guest-thread round trip, so it compares a fork counter
that `os.register_at_fork` bumps in the child instead of asking the kernel for the process
id each time (a system call).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["PerProcess", "fork_count"]

T = TypeVar("T")


_forks = [0]
"""How many times this process's ancestry forked since the module was imported (the child
counts one more than its parent at the moment of the fork)."""


def _after_fork_in_child() -> None:
    _forks[0] += 1


if hasattr(os, "register_at_fork"):  # not Windows, where there is no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)


def fork_count() -> int:
    """A number that differs in a forked child from its parent's at the fork (cheaper than
    `os.getpid`, a system call, for code that must notice a fork on every use)."""
    return _forks[0]


class PerProcess(Generic[T]):
    """`factory()`'s value, made once per process on first `get()` (thread-safe)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._made_in = -1
        """The fork count of the process that made `_value`."""
        self._value: T | None = None

    def get(self) -> T:
        value = self._value
        forks = _forks[0]
        if value is None or self._made_in != forks:
            with self._lock:
                if self._value is None or self._made_in != forks:
                    self._value, self._made_in = self._factory(), forks
                value = self._value
        return value
