"""Fast calls into the reactor's exports.

wasmtime-py's `Func.__call__` re-reads the function type and converts every value on each
call (about 26 µs). A `FastExport` checks the signature once, keeps a preallocated
`wasmtime_val_raw_t` buffer and calls `wasmtime_func_call_unchecked` (about 3 µs).
"""

from __future__ import annotations

import ctypes
from typing import Any, Final

import wasmtime
from wasmtime import _bindings  # pyright: ignore[reportPrivateUsage]
from wasmtime import _ffi as ffi  # pyright: ignore[reportPrivateUsage]

from ...errors import RuntimeUnavailableError
from ._engine import EXPORTED_FUNCTIONS

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
        "_stride",
        "_trap",
        "_trap_ref",
    )

    def __init__(self, store: wasmtime.Store, func: wasmtime.Func, sig: tuple[Any, Any]) -> None:
        params, results = sig
        self._ctx = store._context()  # pyright: ignore[reportPrivateUsage]
        self._func = ctypes.byref(func._func)  # pyright: ignore[reportPrivateUsage]
        self._len = max(len(params), len(results), 1)
        self._buf = (ffi.wasmtime_val_raw_t * self._len)()
        # The same buffer as unsigned 64-bit words, two per value (a `wasmtime_val_raw_t` is
        # 16 bytes; an i64 or i32 is its first word, little-endian): the arguments go in
        # with one slice assignment and the result comes out without the view object that
        # each `buf[i]` makes. ctypes masks integers to the word, as `.i64 = ...` did.
        words = ctypes.sizeof(ffi.wasmtime_val_raw_t) // 8
        self._slots = (ctypes.c_uint64 * (words * self._len)).from_buffer(self._buf)
        self._stride = words
        self._result = results[0] if results else None
        # The raw C entry point: the generated Python wrapper around it costs a frame a call.
        self._call: Any = _bindings._wasmtime_func_call_unchecked  # pyright: ignore[reportPrivateUsage]
        self._new_trap_slot()

    def _new_trap_slot(self) -> None:
        # The slot stays NULL while calls succeed, so one is reused until a trap fills it.
        self._trap = ctypes.POINTER(ffi.wasm_trap_t)()
        self._trap_ref = ctypes.byref(self._trap)

    def __call__(self, *args: int) -> int:
        slots = self._slots
        slots[0 : self._stride * len(args) : self._stride] = args
        error: Any = self._call(self._ctx, self._func, self._buf, self._len, self._trap_ref)
        if error:
            raise GuestTrap(str(wasmtime.WasmtimeError._from_ptr(error)))  # pyright: ignore[reportPrivateUsage]
        if self._trap:
            trap = self._trap
            self._new_trap_slot()
            raise GuestTrap(str(wasmtime.Trap._from_ptr(trap)))  # pyright: ignore[reportPrivateUsage]
        if self._result == I64:
            return slots[0]
        if self._result == I32:
            return slots[0] & 0xFFFF_FFFF  # the low half: the raw value is little-endian
        return 0


def fast_export(store: wasmtime.Store, exports: Any, name: str, sig: tuple[Any, Any]) -> FastExport:
    """The export `name` as a `FastExport`, once its signature is checked to be `sig`."""
    func = export_of(exports, name, wasmtime.Func)
    ty = func.type(store)
    actual = (tuple(str(p) for p in ty.params), tuple(str(r) for r in ty.results))
    if actual != sig:
        raise RuntimeUnavailableError(
            f"QuickJS export {name} has signature {actual}, expected {sig}"
        )
    return FastExport(store, func, sig)


def export_of(exports: Any, name: str, kind: type[Any]) -> Any:
    """The export `name`, which must be a `kind`."""
    item = exports.get(name) if hasattr(exports, "get") else exports[name]
    if not isinstance(item, kind):
        raise RuntimeUnavailableError(f"the QuickJS reactor does not export {name!r}")
    return item
