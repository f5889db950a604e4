"""Zero pages of linear memory handed back to the kernel instead of rewritten.

About four fifths of a guest's pristine image is its shadow stack: 2 MiB of zeros, of which a
cell touches a few kilobytes. Restoring the image by copying rewrites all of it on every cell
(and keeps every pooled guest's whole stack resident); under load, with a hundred guests whose
memories no longer fit in the CPU caches, that copy was most of a cell's start-up cost.
`madvise(MADV_DONTNEED)` on those pages instead drops them: the kernel maps a zero page again
on the next touch, so only the pages a cell used cost anything, and idle guests hold no stack.

Whether dropping a page of a wasmtime memory really reads back as zeros depends on how the
engine mapped it (a copy-on-write mapping of the module's data reads back as that data), so it
is checked once per process on a real memory (`drops_to_zeros`) before it is relied on; where
it does not hold, or off Linux, images are restored by copying as before.

Snapshots read memory in place: `same_bytes` compares with `memcmp`, and `touched_pages` tells
from `/proc/self/pagemap` which pages were touched at all since they were mapped or dropped, so
the untouched ones need not be read (reading a dropped page faults it in).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import sys
from collections.abc import Callable
from typing import Any, Final, cast

__all__ = [
    "CHUNK_BYTES",
    "MIN_RUN_BYTES",
    "PAGE_BYTES",
    "ZEROS",
    "address_of",
    "bit_runs",
    "blank_pages",
    "drop_pages",
    "run_bits",
    "same_bytes",
    "touched_pages",
    "zero_runs",
]

PAGE_BYTES: Final = mmap.PAGESIZE
_MIN_RUN_PAGES: Final = 16  # shorter runs are cheaper to copy than to drop and fault back
MIN_RUN_BYTES: Final = _MIN_RUN_PAGES * PAGE_BYTES
_CHUNK_PAGES: Final = 16
CHUNK_BYTES: Final = _CHUNK_PAGES * PAGE_BYTES
"""Memory is compared in chunks of this many bytes first, page by page only where they differ."""
ZEROS: Final = bytes(CHUNK_BYTES)
_MADV_DONTNEED: Final = 4  # Linux
_PAGEMAP: Final = "/proc/self/pagemap"
_TOUCHED: Final = bytes(ord("1") if byte & 0xC0 else ord("0") for byte in range(256))
"""A pagemap entry's last byte holds bit 63 (page present) and bit 62 (swapped out)."""


def _libc() -> Any:
    """The C library (on Linux, the symbols the process already has: no library search,
    which runs a subprocess and cost every import ~1.5 ms)."""
    try:
        if sys.platform.startswith("linux"):
            return ctypes.CDLL(None, use_errno=True)
        from ctypes import util  # off Linux only: it loads shutil and tempfile (bz2, lzma)

        return ctypes.CDLL(util.find_library("c") or None, use_errno=True)
    except OSError:
        return None


def _function(libc: Any, name: str, *argtypes: Any) -> Callable[..., int] | None:
    try:
        function: Any = getattr(libc, name)
    except AttributeError:  # also when `libc` is None
        return None
    function.argtypes = list(argtypes)
    function.restype = ctypes.c_int
    return cast(Callable[..., int], function)


_c: Final = _libc()
_madvise_function: Final = (
    _function(_c, "madvise", ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if sys.platform.startswith("linux")
    else None
)
_memcmp_function: Final = _function(_c, "memcmp", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def same_bytes(address: int, other: int, length: int) -> bool:
    """Whether the `length` bytes at the two addresses are equal (compared in place)."""
    if _memcmp_function is not None:
        return _memcmp_function(address, other, length) == 0
    return ctypes.string_at(address, length) == ctypes.string_at(other, length)


def address_of(data: bytes) -> int:
    """The address of `data`'s bytes (valid while `data` is alive)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0


def blank_pages(address: int, length: int) -> int:
    """A bit per whole page of the `length` bytes at `address` (bit 0 the first): set where
    the page is all zeros. Compared in place, 64 KiB at a time, page by page only inside
    the chunks that are not all zeros."""
    zeros = address_of(ZEROS)
    pages, bits = length // PAGE_BYTES, 0
    for first in range(0, pages, _CHUNK_PAGES):
        count = min(_CHUNK_PAGES, pages - first)
        start = address + first * PAGE_BYTES
        if count == _CHUNK_PAGES and same_bytes(start, zeros, CHUNK_BYTES):
            bits |= ((1 << count) - 1) << first
            continue
        for page in range(count):
            if same_bytes(start + page * PAGE_BYTES, zeros, PAGE_BYTES):
                bits |= 1 << (first + page)
    return bits


def bit_runs(bits: int, pages: int) -> list[tuple[int, int]]:
    """`(first page, count)` of each run of consecutive set bits among the first `pages`
    bits of `bits` (a bit per page, bit 0 the first)."""
    # Read as a string of binary digits, first page first, and searched at C speed: a shift
    # per page made a new integer of the whole memory's bits each time (0.1 ms of a first
    # guest's load for a 6.6 MiB memory).
    digits = format(bits & ((1 << pages) - 1), "b")[::-1]
    runs: list[tuple[int, int]] = []
    start = digits.find("1")
    while start >= 0:
        end = digits.find("0", start)
        end = len(digits) if end < 0 else end
        runs.append((start, end - start))
        start = digits.find("1", end)
    return runs


def zero_runs(blank: int, pages: int) -> list[tuple[int, int]]:
    """`(offset, length)` of each run of at least 16 blank pages among `pages` pages, `blank`
    a bit per page (see `blank_pages`)."""
    return [
        (first * PAGE_BYTES, count * PAGE_BYTES)
        for first, count in bit_runs(blank, pages)
        if count >= _MIN_RUN_PAGES
    ]


def drop_pages(address: int, length: int) -> bool:
    """Drop the pages of `[address, address + length)` (page-aligned); `False` if the
    kernel refused or this platform cannot."""
    if _madvise_function is None:
        return False
    return _madvise_function(address, length, _MADV_DONTNEED) == 0


def touched_pages(address: int, length: int) -> int | None:
    """A bit per page of `[address, address + length)` (page-aligned; bit 0 the first page):
    set where the page is in memory or swapped out, clear where it was not touched since it
    was mapped or dropped (it then reads as its mapping's backing: zeros for a dropped run,
    see `drop_pages`). `None` where `/proc/self/pagemap` cannot be read (not Linux, or not
    allowed).

    The file is opened per call: a forked child must read its own map, not its parent's.
    """
    pages = length // PAGE_BYTES
    try:
        fd = os.open(_PAGEMAP, os.O_RDONLY)
    except OSError:
        return None
    try:
        entries = os.pread(fd, 8 * pages, 8 * (address // PAGE_BYTES))
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(entries) != 8 * pages:
        return None
    if not pages:
        return 0
    # Each entry's flag byte becomes a binary digit, the first page the lowest (C speed).
    return int(entries[7::8].translate(_TOUCHED)[::-1], 2)


def run_bits(runs: list[tuple[int, int]], size: int) -> int:
    """A bit per page of a memory of `size` bytes, set inside `runs` (`(offset, length)`)."""
    bits = 0
    for offset, length in runs:
        bits |= ((1 << (length // PAGE_BYTES)) - 1) << (offset // PAGE_BYTES)
    return bits & ((1 << (size // PAGE_BYTES)) - 1)
