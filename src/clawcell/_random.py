"""Unguessable ids and seeds from the OS's CSPRNG, read in blocks.

Run ids are capabilities (whoever knows one can `wait` on the run), and every cell's guest gets
a fresh seed, so both come from `os.urandom`. Each `os.urandom` call releases the GIL, though,
and getting it back on a busy process means waiting for whichever guest thread holds it: with
a hundred cells starting at once that wait, not the syscall, was a tenth of the event loop's
time. So the bytes are read 4 KiB at a time and handed out in order, under a lock that never
releases the GIL; a forked child starts from a fresh block, never from its parent's.
"""

from __future__ import annotations

import base64
import os
import threading
from typing import Final

__all__ = ["random_bytes", "random_token", "random_uuid4_text"]

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


def random_uuid4_text() -> str:
    """A random (version 4) UUID as text, as `str(uuid.uuid4())` makes, without building a
    `uuid.UUID` (every run id is one)."""
    raw = bytearray(random_bytes(16))
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    text = raw.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def random_token(count: int) -> str:
    """`secrets.token_urlsafe(count)` from the same blocks: `count` random bytes in URL-safe
    base64, without padding."""
    return base64.urlsafe_b64encode(random_bytes(count)).rstrip(b"=").decode("ascii")
