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
from typing import Final

import wasmtime

from ._pages import drop_pages, zero_runs

__all__ = ["LinearMemory", "memory_cap"]

_WASM_PAGE: Final = 65536
_STRING_CHARS: Final = 16
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

    def __init__(self, store: wasmtime.Store, memory: wasmtime.Memory, sp: wasmtime.Global):
        self._store = store
        self._memory = memory
        self._sp = sp
        self._base = 0
        self.image = b""
        self.image_sp = 0
        self._zero_runs: list[tuple[int, int]] = []
        """The image's long runs of zero pages, dropped instead of copied by `reset`."""

    @property
    def base(self) -> int:
        """Host address of linear memory."""
        if not self._base:
            self._base = ctypes.addressof(self._memory.data_ptr(self._store).contents)
        return self._base

    @property
    def size(self) -> int:
        """The memory's current size in bytes."""
        return self._memory.data_len(self._store)

    @property
    def stack_pointer(self) -> int:
        """The shadow stack pointer."""
        return int(self._sp.value(self._store))  # pyright: ignore[reportArgumentType]

    def copy(self) -> bytes:
        """A copy of the whole linear memory."""
        return ctypes.string_at(self.base, self.size)

    def load(self, data: bytes, stack_pointer: int) -> None:
        """Replace linear memory with `data` (growing it if needed) and set the stack pointer."""
        missing = len(data) - self.size
        if missing > 0:
            try:
                self._memory.grow(self._store, -(-missing // _WASM_PAGE))
            except wasmtime.WasmtimeError as exc:
                raise MemoryError(f"cannot grow guest memory to {len(data)} bytes") from exc
        self._replace(data, stack_pointer)

    def flat_string(self, ptr: int) -> str:
        """The text of the flat QuickJS-NG string at `ptr` (the pinned build's layout)."""
        # A u32 length with the wide flag in the top bit, then 12 bytes of hash/atom data,
        # then Latin-1 or UTF-16LE characters.
        address = self.base + ptr
        header = ctypes.c_uint32.from_address(address).value
        length = header & 0x7FFF_FFFF
        if header & 0x8000_0000:
            data = ctypes.string_at(address + _STRING_CHARS, 2 * length)
            return data.decode("utf-16-le", "surrogatepass")
        return ctypes.string_at(address + _STRING_CHARS, length).decode("latin-1")

    def capture_image(self) -> None:
        """Remember the current memory and stack pointer as the pristine state."""
        self.image = self.copy()
        self.image_sp = self.stack_pointer
        self._zero_runs = self._droppable(zero_runs(self.image))

    def adopt_image(self, template: LinearMemory) -> None:
        """Take `template`'s pristine image as this memory's own, and load it."""
        self.image, self.image_sp = template.image, template.image_sp
        self._zero_runs = template._zero_runs  # pyright: ignore[reportPrivateUsage]
        self.load(self.image, self.image_sp)

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

        The image's long zero runs (the untouched shadow stack) are dropped, not copied:
        only the pages a cell touched come back, as zeros (see `_pages`).
        """
        if not self._zero_runs:
            self._replace(self.image, self.image_sp)
            return
        base, source = self.base, _address(self.image)
        copied = 0
        for offset, length in self._zero_runs:
            ctypes.memmove(base + copied, source + copied, offset - copied)
            if not drop_pages(base + offset, length):
                ctypes.memset(base + offset, 0, length)
            copied = offset + length
        self._replace(self.image, self.image_sp, start=copied)

    def _droppable(self, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if runs and not _drops_checked:
            _drops_checked.append(self._drops_to_zeros(*runs[0]))
        return runs if runs and _drops_checked[0] else []

    def _drops_to_zeros(self, offset: int, length: int) -> bool:
        """Whether dropping a run's pages (filled with non-zero bytes first) reads back as
        zeros; the run holds zeros again afterwards either way."""
        address = self.base + offset
        ctypes.memset(address, 0xA5, length)
        dropped = drop_pages(address, length)
        zeros = dropped and ctypes.string_at(address, length) == bytes(length)
        ctypes.memset(address, 0, length)
        return zeros

    def _replace(self, data: bytes, stack_pointer: int, *, start: int = 0) -> None:
        """Memory from `start` on becomes `data`'s (zeros past its end); set the stack pointer."""
        ctypes.memmove(self.base + start, _address(data) + start, len(data) - start)
        extra = self.size - len(data)
        if extra > 0:
            ctypes.memset(self.base + len(data), 0, extra)
        self._sp.set_value(self._store, wasmtime.Val.i32(stack_pointer))
        # An epoch trap leaves the deadline at the current epoch: make the instance runnable.
        self._store.set_epoch_deadline(1)


def _address(data: bytes) -> int:
    """The address of `data`'s bytes (valid while `data` is alive)."""
    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
