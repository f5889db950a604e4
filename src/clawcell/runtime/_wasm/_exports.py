"""Fast calls into the reactor's exports, and calls that can move between threads.

A `FastExport` checks the export's signature once, keeps a preallocated `wasmtime_val_raw_t`
buffer and calls `wasmtime_func_call_unchecked` (wasmtime-py's `Func.__call__`, which
re-reads the type and converts every value on each call, took about 26 µs against 3 µs).

`FastExport.start` makes the same call a `CallFuture` (`wasmtime_func_call_async`): the
guest runs on a stack of its own (a fiber the store keeps between calls), and `poll` runs it
until it returns or its epoch callback suspends it (`_backstop`'s slices). A suspended call
may be polled again from any thread: wasmtime moves a call's thread-local state with the
fiber. It costs about 1.3 µs more than the fast call. A store runs at most one call future
at a time and nothing else while one is alive (the C API's rule): `Store.future`.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any, Final

from ...errors import RuntimeUnavailableError
from ._capi import (
    EXTERN_FUNC,
    VAL_I32,
    VAL_I64,
    VAL_RAW_BYTES,
    EngineError,
    Extern,
    capi,
    error_text,
    trap_text,
)
from ._engine import EXPORTED_FUNCTIONS
from ._handles import CallInFlight, Export, Signature, Store, func_signature, payload
from ._host_funcs import take_host_exception
from ._stacks import claim

__all__ = [
    "I32",
    "I64",
    "SIGNATURES",
    "CallFuture",
    "FastExport",
    "GuestTrap",
    "export_of",
    "fast_export",
]

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
        "_future",
        "_len",
        "_params",
        "_result",
        "_slots",
        "_store",
        "_stride",
        "_trap",
        "_trap_ref",
    )

    def __init__(self, store: Store, func: Extern, sig: Signature) -> None:
        params, results = sig
        self._params = tuple(_VAL_KINDS[kind] for kind in params)
        self._future: CallFuture | None = None
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
        if self._trap:  # an earlier call's, never read (an exception came first): not ours
            trap, self._trap.value = self._trap.value or 0, None
            capi().trap_delete(trap)
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

    def start(self, *args: int) -> CallFuture:
        """The same call as a `CallFuture`, not yet run (`poll` runs it). The export reuses
        one future: start it again only once the last one was freed.

        Raises:
            EngineError: the store runs another call future.
        """
        future = self._future
        if future is None:
            future = self._future = CallFuture(self._store, self._func, self._params, self._result)
        future.begin(args)
        return future


_VAL_KINDS: Final = {I32: VAL_I32, I64: VAL_I64}
_VAL_WORDS: Final = 4
"""A `wasmtime_val_t` as 64-bit words: the kind byte's word, then the value's union (an i32
or i64 is the first word of it)."""


class CallFuture:
    """One export's calls run as wasmtime call futures (see the module's docstring): `begin`
    makes one, `poll` runs it, `result` reads it, `free` frees it (`poll` does once the call
    returned). The argument and result buffers are the export's, made once."""

    __slots__ = (
        "__weakref__",
        "_api",
        "_args",
        "_calls",
        "_error",
        "_error_ref",
        "_func",
        "_ptr",
        "_result",
        "_results",
        "_self_ref",
        "_store",
        "_trap",
        "_trap_ref",
    )

    def __init__(
        self, store: Store, func: Any, params: tuple[int, ...], result: str | None
    ) -> None:
        # What the store holds while the call is alive (`Store.future_ref`).
        self._self_ref: weakref.ref[CallInFlight] = weakref.ref(self)
        self._api = capi()
        self._store = store
        self._calls = store.calls  # its own reference: see `Store`
        self._func = func
        self._args = (ctypes.c_uint64 * (_VAL_WORDS * max(len(params), 1)))()
        self._args[0 : _VAL_WORDS * len(params) : _VAL_WORDS] = params
        self._results = (ctypes.c_uint64 * _VAL_WORDS)()
        self._result = result
        self._trap = ctypes.c_void_p()
        self._error = ctypes.c_void_p()
        self._trap_ref = ctypes.byref(self._trap)
        self._error_ref = ctypes.byref(self._error)
        self._ptr = 0

    def begin(self, args: tuple[int, ...]) -> None:
        """Make the call future of `args` (the export's parameters, in order).

        Raises:
            EngineError: the store runs another call future.
        """
        store = self._store
        ref = store.future_ref  # `store.future`, inline: once per tool call
        if ref is not None and ref() is not None:
            raise EngineError("a store runs one call future at a time: finish the other first")
        if self._trap or self._error:  # an ended call's failure `result` never read: not ours
            self._forget_failure()
        self._args[1 : _VAL_WORDS * len(args) : _VAL_WORDS] = args  # masked to the word
        self._ptr = self._api.func_call_async(
            store.context,
            self._func,
            self._args,
            len(args),
            self._results,
            1 if self._result else 0,
            self._trap_ref,
            self._error_ref,
        )
        self._calls[0] = self._ptr
        store.future_ref = self._self_ref

    def poll(self) -> bool:
        """Run the call on this thread until it returns (True: read `result`; the future is
        freed) or is suspended (False: poll again, from this thread or another)."""
        if not self._store.fiber_stack:  # its first: the store claims the stack it runs on
            if not claim(self._store, self._api.call_future_poll, self._ptr):
                return False
        elif not self._api.call_future_poll(self._ptr):
            return False
        self.free()
        return True

    def result(self) -> int:
        """The call's value, once `poll` returned True, on the thread that polled last.

        Raises:
            GuestTrap: the call trapped or failed (a host function's exception on this
                thread is its `__cause__`).
        """
        if self._error:
            error, self._error.value = self._error.value or 0, None
            raise GuestTrap(error_text(error)) from take_host_exception()
        if self._trap:
            trap, self._trap.value = self._trap.value or 0, None
            raise GuestTrap(trap_text(trap)) from take_host_exception()
        value: int = self._results[1]
        return value & 0xFFFF_FFFF if self._result == I32 else value

    def _forget_failure(self) -> None:
        trap, self._trap.value = self._trap.value or 0, None
        error, self._error.value = self._error.value or 0, None
        if trap:
            self._api.trap_delete(trap)
        if error:
            self._api.error_delete(error)

    def free(self) -> None:
        """Free the future; one still suspended is unwound first (its guest code stops as if
        it had trapped: use its instance no more). Safe to call twice, and after the store
        freed it (see `Store`)."""
        ptr, self._ptr = self._ptr, 0
        calls = self._calls
        if ptr and calls[0] == ptr:
            calls[0] = 0
            self._store.future_ref = None
            self._api.call_future_delete(ptr)

    def __del__(self) -> None:
        self.free()


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
