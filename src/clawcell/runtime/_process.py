"""Process-wide singletons that a forked child rebuilds instead of inheriting.

Threads do not survive `fork`: a child that reused the parent's watchdog or guest worker
would wait on threads that no longer exist. A `PerProcess` value is created on first use in
each process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["PerProcess"]

T = TypeVar("T")


class PerProcess(Generic[T]):
    """`factory()`'s value, made once per process on first `get()` (thread-safe)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._pid = -1
        self._value: T | None = None

    def get(self) -> T:
        pid = os.getpid()
        value = self._value
        if value is None or self._pid != pid:
            with self._lock:
                if self._value is None or self._pid != pid:
                    self._value, self._pid = self._factory(), pid
                value = self._value
        return value
