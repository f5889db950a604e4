"""Fast calls into the reactor's exports.

A `FastExport` checks the export's signature once, keeps a preallocated `wasmtime_val_raw_t`
buffer and calls `wasmtime_func_call_unchecked` (wasmtime-py's `Func.__call__`, which
re-reads the type and converts every value on each call, took about 26 µs against 3 µs).
"""

from __future__ import annotations

import ctypes
from typing import Any, Final

from ...errors import RuntimeUnavailableError
from ._capi import EXTERN_FUNC, VAL_RAW_BYTES, Extern, capi, error_text, trap_text
from ._engine import EXPORTED_FUNCTIONS
from ._handles import Export, Signature, Store, func_signature, payload
from ._host_funcs import take_host_exception

__all__ = ["I32", "I64", "SIGNATURES", "FastExport", "GuestTrap", "export_of", "fast_export"]

I32: Final = "i32"
I64: Final = "i64"
SIGNATURES: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "malloc": ((I32,), (I32,)),
    "free": ((I32,), ()),
    "JS_NewRuntime": ((), (I32,)),
    "JS_NewContext": ((I32,), (I32,)),
    "JS_SetMemoryLimit": ((I32, I32), ()),
    "JS_SetMaxStackSize": ((I32, I32), ()),
    "JS_SetInterruptHandler": ((I32, I32, I32), ()),
    "JS_Eval": ((I32, I32, I32, I32, I32), (I64,)),
    "JS_Call": ((I32, I64, I64, I32, I32), (I64,)),
    "JS_FreeValue": ((I32, I64), ()),
    "JS_DupValue": ((I32, I64), (I64,)),
    "JS_ToCStringLen2": ((I32, I32, I64, I32), (I32,)),
    "JS_FreeCString": ((I32, I32), ()),
    "JS_NewStringLen": ((I32, I32, I32), (I64,)),
    "JS_ExecutePendingJob": ((I32, I32), (I32,)),
    "JS_GetException": ((I32,), (I64,)),
    "JS_GetPropertyStr": ((I32, I64, I32), (I64,)),
    "JS_RunGC": ((I32,), ()),
    "JS_SetHostPromiseRejectionTracker": ((I32, I32, I32), ()),
    "JS_EvalFunction": ((I32, I64), (I64,)),
    "clawcell_turn": ((I32, I32, I64, I64, I32, I32, I32, I32), (I64,)),
    "clawcell_start": ((I32, I32, I64, I64, I32, I32, I32, I32, I64), (I64,)),
}
assert set(EXPORTED_FUNCTIONS) <= set(SIGNATURES)


_BUFFER_VALUES: Final = 9
"""Every export's buffer holds this many values (one ctypes array type for all: making a
type costs more than the few bytes a shorter buffer saves)."""
_Word = ctypes.c_uint64
_Buffer = _Word * (VAL_RAW_BYTES // 8 * _BUFFER_VALUES)


class GuestTrap(Exception):
    """The wasm instance trapped (epoch deadline, out of bounds, unreachable)."""


class FastExport:
    """A wasm export called through the unchecked fast path."""

    __slots__ = (
        "_buf",
        "_call",
        "_ctx",
        "_func",
        "_len",
        "_result",
        "_slots",
        "_store",
        "_stride",
        "_trap",
        "_trap_ref",
    )

    def __init__(self, store: Store, func: Extern, sig: Signature) -> None:
        params, results = sig
        self._store = store  # the context and the function are the store's
        self._ctx = store.context
        self._func = payload(store, func)
        self._len = max(len(params), len(results), 1)
        # The buffer as unsigned 64-bit words, two per value (a `wasmtime_val_raw_t` is 16
        # bytes; an i64 or i32 is its first word, little-endian): the arguments go in with
        # one slice assignment and the result comes out as a plain int. ctypes masks
        # integers to the word.
        words = VAL_RAW_BYTES // 8
        self._buf = _Buffer() if self._len <= _BUFFER_VALUES else (_Word * (words * self._len))()
        self._slots = self._buf
        self._stride = words
        self._result = results[0] if results else None
        self._call: Any = capi().func_call_unchecked
        self._trap = ctypes.c_void_p()  # NULL while calls succeed; cleared after a trap
        self._trap_ref = ctypes.byref(self._trap)

    def __call__(self, *args: int) -> int:
        slots = self._slots
        slots[0 : self._stride * len(args) : self._stride] = args
        error: Any = self._call(self._ctx, self._func, self._buf, self._len, self._trap_ref)
        if error:
            raise GuestTrap(error_text(error)) from take_host_exception()
        if self._trap:
            trap, self._trap.value = self._trap.value or 0, None
            raise GuestTrap(trap_text(trap)) from take_host_exception()
        if self._result == I64:
            return slots[0]
        if self._result == I32:
            return slots[0] & 0xFFFF_FFFF  # the low half: the raw value is little-endian
        return 0


def fast_export(exports: Export, name: str, sig: Signature) -> FastExport:
    """The export `name` as a `FastExport`, once its signature is checked to be `sig`."""
    store = exports.store
    func = export_of(exports, name, EXTERN_FUNC)
    actual = func_signature(store, func)
    if actual != sig:
        raise RuntimeUnavailableError(
            f"QuickJS export {name} has signature {actual}, expected {sig}"
        )
    return FastExport(store, func, sig)


def export_of(exports: Export, name: str, kind: int) -> Extern:
    """The export `name`, which must be of `kind` (`EXTERN_FUNC`, `EXTERN_MEMORY`, ...)."""
    item = exports.get(name, kind)
    if item is None:
        raise RuntimeUnavailableError(f"the QuickJS reactor does not export {name!r}")
    return item
