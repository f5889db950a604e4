"""Unguessable ids and seeds from the OS's CSPRNG, read in blocks.

Run ids are capabilities (whoever knows one can `wait` on the run), and every cell's guest gets
a fresh seed, so both come from `os.urandom`. Each `os.urandom` call releases the GIL, though,
and getting it back on a busy process means waiting for whichever guest thread holds it: with
a hundred cells starting at once that wait, not the syscall, was a tenth of the event loop's
time. So the bytes are read 4 KiB at a time and handed out in order, under a lock that never
releases the GIL; a forked child starts from a fresh block, never from its parent's.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Final

__all__ = ["random_bytes", "random_uuid4"]

_BLOCK: Final = 4096


class _Pool:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.block = b""
        self.used = 0

    def take(self, count: int) -> bytes:
        if count > _BLOCK // 4:
            return os.urandom(count)
        with self.lock:
            if self.used + count > len(self.block):
                self.block, self.used = os.urandom(_BLOCK), 0
            start = self.used
            self.used += count
            return self.block[start : self.used]

    def forget(self) -> None:
        self.lock = threading.Lock()
        self.block, self.used = b"", 0


_pool = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.forget)


def random_bytes(count: int) -> bytes:
    """`count` bytes from the OS's CSPRNG, each handed out once."""
    return _pool.take(count)


def random_uuid4() -> uuid.UUID:
    """A random (version 4) UUID, as `uuid.uuid4()` makes."""
    return uuid.UUID(bytes=random_bytes(16), version=4)
