"""A store's memory and i32 global exports, read and written through the C API.

The hot operations (a memory's size, setting the stack pointer on every reset) prepare their
arguments once: each is one C call.
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_uint64

from ._capi import EXTERN_GLOBAL, EXTERN_MEMORY, VAL_I32, Extern, Val, capi, raise_error
from ._handles import Store, payload

__all__ = ["GlobalI32", "Memory"]


class _Export:
    """An export of `store` of one kind, with the arguments every C call on it takes."""

    __slots__ = ("_api", "_ctx", "_ref", "extern", "store")

    def __init__(self, store: Store, extern: Extern, kind: int, what: str) -> None:
        if extern.kind != kind:
            raise TypeError(f"not a {what} export: kind {extern.kind!r}")
        self.store, self.extern = store, extern
        self._api, self._ctx = capi(), store.context
        self._ref = payload(store, extern)


class Memory(_Export):
    """A linear memory export of `store`."""

    __slots__ = ()

    def __init__(self, store: Store, extern: Extern) -> None:
        super().__init__(store, extern, EXTERN_MEMORY, "memory")

    def address(self) -> int:
        """The host address of the memory's first byte."""
        return self._api.memory_data(self._ctx, self._ref) or 0

    def data_size(self) -> int:
        """The memory's size in bytes."""
        return self._api.memory_data_size(self._ctx, self._ref)

    def pages(self) -> int:
        """The memory's size in 64 KiB wasm pages."""
        return self._api.memory_size(self._ctx, self._ref)

    def grow(self, pages: int) -> int:
        """Add `pages` wasm pages; returns the previous size in pages. Raises `EngineError`
        when the memory cannot grow (its maximum, the store's limit)."""
        previous = c_uint64()
        error = self._api.memory_grow(self._ctx, self._ref, pages, byref(previous))
        raise_error(error, f"cannot grow the memory by {pages} pages")
        return previous.value


class GlobalI32(_Export):
    """A mutable i32 global export of `store` (set with a value prepared once)."""

    __slots__ = ("_value", "_value_ref")

    def __init__(self, store: Store, extern: Extern) -> None:
        super().__init__(store, extern, EXTERN_GLOBAL, "global")
        self._value = Val()
        self._value.kind = VAL_I32
        self._value_ref = byref(self._value)

    def get(self) -> int:
        """The global's value, as a signed 32-bit integer."""
        out = Val()
        self._api.global_get(self._ctx, self._ref, byref(out))
        return ctypes.c_int32(out.of[0] & 0xFFFF_FFFF).value

    def set(self, value: int) -> None:
        """Set the global (`value` wraps to 32 bits, as a C `int32_t` store does)."""
        self._value.of[0] = value & 0xFFFF_FFFF
        error = self._api.global_set(self._ctx, self._ref, self._value_ref)
        raise_error(error, "cannot set a global")
