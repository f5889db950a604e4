"""A guest's linear memory, its shadow-stack pointer and its pristine image.

Everything a QuickJS guest owns lives in the instance's linear memory plus the stack-pointer
global, so copying those two is a complete copy of the guest: the pristine image taken once
after set-up is restored in place before each cell (`reset`), copied into new instances of
the same configuration (`adopt_image`), and snapshots replace it wholesale (`load`).

`flat_string` reads a flat QuickJS string straight from memory (the fast string reader; the
instance enables it only once it agrees with `JS_ToCStringLen2`).

Memories live in a static reservation (`MEMORY_RESERVATION`, far above the store's memory
cap), so they grow in place and their host address never changes: it is read once.
"""

from __future__ import annotations

import ctypes
import mmap
import struct
from typing import Final

from ._capi import EngineError
from ._externs import GlobalI32, Memory
from ._handles import Store
from ._image_file import StoredImage
from ._pages import (
    CHUNK_BYTES,
    MIN_RUN_BYTES,
    PAGE_BYTES,
    ZEROS,
    address_of,
    bit_runs,
    blank_pages,
    drop_pages,
    run_bits,
    same_bytes,
    touched_pages,
    zero_runs,
)

__all__ = ["LinearMemory", "memory_cap"]

_WASM_PAGE: Final = 65536
_STRING_CHARS: Final = 16
_U32: Final = struct.Struct("<I")
_drops_checked: list[bool] = []
"""Whether dropped pages of a linear memory read back as zeros in this process (see
`_pages`); checked once, on the first image captured."""


def memory_cap(memory_limit_bytes: int) -> int:
    """The wasm memory cap for a QuickJS heap limit of `memory_limit_bytes`."""
    # Headroom above the JS heap for the 2 MiB shadow stack, static data and allocator slack,
    # so QuickJS reports its own catchable out-of-memory error first.
    return memory_limit_bytes + 32 * 1024 * 1024


class LinearMemory:
    """The linear memory and stack pointer of one instance, with its pristine image."""

    def __init__(self, store: Store, memory: Memory, sp: GlobalI32):
        self._store = store
        self._memory = memory
        self._sp = sp
        self._base = 0
        self._view = memoryview(b"")
        """The memory as far as it had grown when `flat_string` last needed more of it."""
        self.image = memoryview(b"")
        """The pristine image, read-only (see `capture_image`)."""
        self._image_address = 0
        self._blank = 0
        """A bit per page of the image: set where the page is all zeros."""
        self.image_sp = 0
        self._zero_runs: list[tuple[int, int]] = []
        """The image's long runs of zero pages, dropped instead of copied by `reset`."""
        self._unlike_base: tuple[bytes, list[int]] | None = None
        self._run_pages = 0
        """A bit per page, set inside the zero runs."""
        self._runs_dropped = False
        """`drop_zero_runs` dropped every run and nothing ran since (the next reset skips them)."""

    @property
    def base(self) -> int:
        """Host address of linear memory."""
        if not self._base:
            self._base = self._memory.address()
        return self._base

    @property
    def size(self) -> int:
        """The memory's current size in bytes."""
        return self._memory.data_size()

    @property
    def stack_pointer(self) -> int:
        """The shadow stack pointer."""
        return self._sp.get()

    def copy(self) -> bytes:
        """A copy of the whole linear memory."""
        return ctypes.string_at(self.base, self.size)

    def load_pages(
        self, size: int, pages: list[int], contents: bytes, stack_pointer: int, base: bytes
    ) -> None:
        """Become `base` (zero pages past its end) with `pages` replaced by `contents`, sized
        `size`: what `differing_pages(base)` and `read_pages` took from another memory.

        Starts from this memory's pristine image (a reset, which drops its zero runs) and
        writes only the pages where that image differs from `base` and the given pages, so
        a snapshot costs what it carries, not the memory's size.
        """
        self._grow_to(size)  # first: a memory that cannot grow is left as it was
        self.reset()
        if self.size > size:  # a smaller memory (an older image): the rest is zeros
            ctypes.memset(self.base + size, 0, self.size - size)
        given = set(pages)
        here, there, zeros = self.base, address_of(base), address_of(ZEROS)
        for page in self._unlike(base):
            start = page * PAGE_BYTES
            if page not in given and start < size:
                source = there + start if start + PAGE_BYTES <= len(base) else zeros
                ctypes.memmove(here + start, source, PAGE_BYTES)
        source = address_of(contents)
        for i, page in enumerate(pages):
            ctypes.memmove(here + page * PAGE_BYTES, source + i * PAGE_BYTES, PAGE_BYTES)
        self.set_stack_pointer(stack_pointer)

    def set_stack_pointer(self, value: int) -> None:
        """Set the shadow stack pointer (an i32 global; `value` as stored, 0 to 2**32 - 1)."""
        self._sp.set(value)

    def _unlike(self, base: bytes) -> list[int]:
        """The pages where the pristine image differs from `base` (computed once per base)."""
        cached = self._unlike_base
        if cached is None or cached[0] is not base:
            image = self._image_address
            self._unlike_base = cached = (base, _pages_unlike(image, len(self.image), base))
        return cached[1]

    def _grow_to(self, size: int) -> None:
        missing = size - self.size
        if missing > 0:
            try:
                self._memory.grow(-(-missing // _WASM_PAGE))
            except EngineError as exc:
                raise MemoryError(f"cannot grow guest memory to {size} bytes") from exc

    def differing_pages(self, base: bytes) -> list[int]:
        """Numbers of the pages unlike `base`'s (zero pages past its end), compared in place;
        pages of the image's dropped zero runs that nothing touched since are known to be
        zeros and are not read at all (reading them would fault each one in)."""
        return _pages_unlike(self.base, self.size, base, self._untouched_zeros())

    def _untouched_zeros(self) -> int:
        """A bit per page: set for a page of a dropped zero run that was not touched since
        it was dropped (it reads as zeros); none set when that is unknown."""
        touched = touched_pages(self.base, self.size) if self._run_pages else None
        if touched is None:
            return 0
        return self._run_pages & ~touched

    def read_pages(self, pages: list[int]) -> bytes:
        """The contents of `pages`, one after another (consecutive pages read at once)."""
        base, parts, i = self.base, list[bytes](), 0
        while i < len(pages):
            end = i + 1
            while end < len(pages) and pages[end] == pages[end - 1] + 1:
                end += 1
            parts.append(ctypes.string_at(base + pages[i] * PAGE_BYTES, (end - i) * PAGE_BYTES))
            i = end
        return b"".join(parts)

    def flat_string(self, ptr: int) -> str:
        """The text of the flat QuickJS-NG string at `ptr` (the pinned build's layout)."""
        # A u32 length with the wide flag in the top bit, then 12 bytes of hash/atom data,
        # then Latin-1 or UTF-16LE characters, decoded straight from a view of the memory
        # (no ctypes call: one per turn of every cell).
        view = self._view
        if len(view) < ptr + _STRING_CHARS:
            view = self._grown_view()
        header: int = _U32.unpack_from(view, ptr)[0]
        start = ptr + _STRING_CHARS
        end = start + (2 if header & 0x8000_0000 else 1) * (header & 0x7FFF_FFFF)
        if len(view) < end:
            view = self._grown_view()
        if header & 0x8000_0000:
            return str(view[start:end], "utf-16-le", "surrogatepass")
        return str(view[start:end], "latin-1")

    def _grown_view(self) -> memoryview:
        """A view of the whole memory as it is now (it grows in place, never moves)."""
        size = self.size
        self._view = memoryview((ctypes.c_ubyte * size).from_address(self.base)).cast("B")
        return self._view

    def capture_image(self) -> None:
        """Remember the current memory and stack pointer as the pristine state.

        The image is an anonymous mapping with only the memory's non-blank pages copied in:
        most of a fresh guest is zeros (the untouched shadow stack, the free heap), which are
        neither copied nor resident. Its blank pages are found in place, and its long zero
        runs are what `reset` drops instead of copying.
        """
        size = self.size
        blank = blank_pages(self.base, size)
        self.image, self._image_address = _sparse_copy(self.base, size, blank)
        self._take_image(blank, self.stack_pointer)

    def _take_image(self, blank: int, stack_pointer: int) -> None:
        """Adopt the image just copied in (`blank`: a bit per blank page of it)."""
        size = len(self.image)
        self._blank = blank
        self.image_sp = stack_pointer
        self._zero_runs = self._droppable(zero_runs(blank, size // PAGE_BYTES))
        self._run_pages = run_bits(self._zero_runs, size)
        self._unlike_base = None

    def stored_image(self, handles: dict[str, int]) -> StoredImage:
        """The pristine image as stored (its non-blank pages), with host-held `handles`."""
        pages = len(self.image) // PAGE_BYTES
        runs = bit_runs(~self._blank & ((1 << pages) - 1), pages)
        data = b"".join(self.image[f * PAGE_BYTES : (f + n) * PAGE_BYTES] for f, n in runs)
        return StoredImage(
            size=len(self.image),
            stack_pointer=self.image_sp,
            runs=runs,
            pages=data,
            handles=handles,
        )

    def load_image(self, stored: StoredImage) -> None:
        """Take `stored` (another memory's `stored_image`) as the pristine image, and load
        it (as a reset does)."""
        size, runs, data = stored.size, stored.runs, stored.pages
        pages = size // PAGE_BYTES
        if size % PAGE_BYTES or len(data) != sum(n for _, n in runs) * PAGE_BYTES:
            raise ValueError(f"an image of {size} bytes cannot hold {len(data)} bytes of pages")
        if any(first < 0 or count <= 0 or first + count > pages for first, count in runs):
            raise ValueError(f"an image's page runs {runs!r} lie outside its {pages} pages")
        self._grow_to(size)  # first: a memory that cannot grow is left as it was
        region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        target = ctypes.addressof(ctypes.c_char.from_buffer(region))
        source, copied, kept = memoryview(data), 0, 0  # bytes, or a view of a mapped file
        for first, count in runs:
            start, length = first * PAGE_BYTES, count * PAGE_BYTES
            region[start : start + length] = source[copied : copied + length]
            copied += length
            kept |= ((1 << count) - 1) << first
        self.image, self._image_address = memoryview(region).toreadonly(), target
        self._take_image(((1 << pages) - 1) & ~kept, stored.stack_pointer)
        self._restore()  # the guest's first image, not a reset between cells

    def adopt_image(self, template: LinearMemory) -> None:
        """Take `template`'s pristine image as this memory's own, and load it (as a reset
        does: its zero runs are dropped, not copied)."""
        self.image, self.image_sp = template.image, template.image_sp
        self._image_address = template._image_address  # pyright: ignore[reportPrivateUsage]
        self._blank = template._blank  # pyright: ignore[reportPrivateUsage]
        self._zero_runs = template._zero_runs  # pyright: ignore[reportPrivateUsage]
        self._unlike_base = template._unlike_base  # pyright: ignore[reportPrivateUsage]
        self._run_pages = template._run_pages  # pyright: ignore[reportPrivateUsage]
        self._grow_to(len(self.image))
        self.reset()

    @property
    def grown(self) -> bool:
        """Memory grew past the image, so an in-place reset cannot make it pristine.

        The image restores the allocator's view of the heap, but wasm memory cannot shrink:
        the next `sbrk` starts above the grown pages, which are then lost to the guest. A
        grown instance would run out of memory after a few large cells.
        """
        return self.size > len(self.image)

    def reset(self) -> None:
        """Restore the pristine image in place; memory grown since is zeroed.

        The image's long zero runs (the untouched shadow stack, the free heap) are dropped,
        not copied: only the pages a cell touched come back, as zeros (see `_pages`); runs
        `drop_zero_runs` dropped already are left alone.
        """
        self._restore()

    def _restore(self) -> None:
        dropped, self._runs_dropped = self._runs_dropped, False
        if not self._zero_runs:
            self._replace()
            return
        base, source = self.base, self._image_address
        copied = 0
        for offset, length in self._zero_runs:
            ctypes.memmove(base + copied, source + copied, offset - copied)
            if not dropped and not drop_pages(base + offset, length):
                ctypes.memset(base + offset, 0, length)
            copied = offset + length
        self._replace(start=copied)

    def drop_zero_runs(self) -> None:
        """Drop the pages of the image's zero runs (the stack, the free heap) that the last
        cell touched, so an idle memory holds no more than its image. The caller must `reset`
        before guest code runs again, and nothing may write to the memory in between: that
        reset then leaves the runs alone."""
        base = self.base
        self._runs_dropped = all(drop_pages(base + o, n) for o, n in self._zero_runs)

    def _droppable(self, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if runs and not _drops_checked:
            _drops_checked.append(self._drops_to_zeros(runs))
        return runs if runs and _drops_checked[0] else []

    def _drops_to_zeros(self, runs: list[tuple[int, int]]) -> bool:
        """Whether dropping pages of the runs (filled with non-zero bytes first) reads them
        back as zeros, probed at both ends of every run; the runs hold zeros again after (left
        dropped: zeroing them would fault each probed page in again for nothing)."""
        probe = MIN_RUN_BYTES
        for offset, length in runs:
            for address in (self.base + offset, self.base + offset + length - probe):
                ctypes.memset(address, 0xA5, probe)
                dropped = drop_pages(address, probe)
                if not (dropped and same_bytes(address, address_of(ZEROS), probe)):
                    ctypes.memset(address, 0, probe)
                    return False
        return True

    def _replace(self, *, start: int = 0) -> None:
        """Memory from `start` on becomes the image's (zeros past its end); set the stack
        pointer to the image's."""
        size = len(self.image)
        ctypes.memmove(self.base + start, self._image_address + start, size - start)
        extra = self.size - size
        if extra > 0:
            ctypes.memset(self.base + size, 0, extra)
        self.set_stack_pointer(self.image_sp)
        # An epoch trap leaves the deadline at the current epoch: make the instance runnable.
        self._store.set_epoch_deadline(1)


def _sparse_copy(address: int, size: int, blank: int) -> tuple[memoryview, int]:
    """A read-only copy of the `size` bytes at `address` in a fresh anonymous mapping, and
    its address: the pages not set in `blank` are copied, runs of them at once; the blank
    ones are left as the mapping's untouched zeros."""
    region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    target = ctypes.addressof(ctypes.c_char.from_buffer(region))
    pages = size // PAGE_BYTES
    for first, count in bit_runs(~blank & ((1 << pages) - 1), pages):
        offset = first * PAGE_BYTES
        ctypes.memmove(target + offset, address + offset, count * PAGE_BYTES)
    tail = pages * PAGE_BYTES
    ctypes.memmove(target + tail, address + tail, size - tail)
    return memoryview(region).toreadonly(), target


_blank_cache: dict[int, tuple[bytes, int]] = {}


def _blank_pages(base: bytes, pages: int) -> int:
    """A bit per page of a memory of `pages` pages: set where `base`'s page is all zeros or
    past its end (`base`'s own bits computed once; the canonical image is one per process)."""
    cached = _blank_cache.get(id(base))
    if cached is None or cached[0] is not base:
        _blank_cache.clear()
        _blank_cache[id(base)] = cached = (base, blank_pages(address_of(base), len(base)))
    full = len(base) // PAGE_BYTES
    past = ((1 << pages) - 1) >> full << full if pages > full else 0
    return cached[1] | past


def _pages_unlike(here: int, size: int, base: bytes, unread: int = 0) -> list[int]:
    """Numbers of the pages of the `size` bytes at `here` unlike `base`'s (zero pages past
    its end); `unread` has a bit set for each page known to read as zeros without reading it.

    Compared in place, 64 KiB chunks first and page by page only inside the chunks that
    differ, so an unchanged page costs a `memcmp`, never a copy.
    """
    there, zeros, known = address_of(base), address_of(ZEROS), len(base)
    equal = unread & _blank_pages(base, size // PAGE_BYTES)
    dirty: list[int] = []
    for chunk in range(0, size, CHUNK_BYTES):
        length = min(CHUNK_BYTES, size - chunk)
        first, count = chunk // PAGE_BYTES, length // PAGE_BYTES
        every = (1 << count) - 1
        if equal >> first & every == every:
            continue
        if chunk + length <= known:
            if same_bytes(here + chunk, there + chunk, length):
                continue
        elif chunk >= known and same_bytes(here + chunk, zeros, length):
            continue
        for page in range(first, first + count):
            start = page * PAGE_BYTES
            if equal >> page & 1:
                continue
            if unread >> page & 1:  # reads as zeros, and the base page is not blank
                dirty.append(page)
                continue
            other = there + start if start + PAGE_BYTES <= known else zeros
            if not same_bytes(here + start, other, PAGE_BYTES):
                dirty.append(page)
    return dirty
