"""Host functions a guest calls through its function table (the interrupt check, the
promise-rejection tracker), made with `wasmtime_func_new_unchecked`.

One C trampoline serves every host function of the process: a function's `env` is the key of
its entry here, and the finalizer wasmtime runs when the function's store is freed removes
the entry. Arguments and the result travel in the raw `wasmtime_val_raw_t` buffer: an i32
is read as a signed 32-bit value, an i64 as an unsigned 64-bit one (as the fast export calls
return it). An exception in the Python function becomes a trap (`python exception`), so the
guest call fails (its instance is then restored) rather than unwinding through wasm frames;
the exception is kept for the thread and becomes the `GuestTrap`'s `__cause__`
(`take_host_exception`), where wasmtime-py re-raised it in its place.

The registry holds the Python callables until their store is freed, so a callable must not
hold its guest (the guest's callbacks keep only weak references, see `_callbacks`).
"""

from __future__ import annotations

import itertools
from _thread import get_ident
from collections.abc import Callable
from ctypes import byref, c_uint64, c_void_p
from typing import Any, Final

from ._capi import (
    FINALIZER,
    PAYLOAD,
    UNCHECKED_CALLBACK,
    VAL_FUNCREF,
    CApi,
    EngineError,
    Extern,
    Val,
    ValtypeVec,
    capi,
    raise_error,
)
from ._handles import Signature, Store, payload

__all__ = [
    "TRAP_ON_EXCEPTION",
    "add_to_table",
    "in_host_function",
    "keep_host_exception",
    "live_host_functions",
    "take_host_exception",
]

TRAP_ON_EXCEPTION: Final = b"python exception"
_KINDS: Final = {"i32": 0, "i64": 1}
_MASK64: Final = 0xFFFF_FFFF_FFFF_FFFF
_MAX_PARAMS: Final = 8
_Types = c_void_p * _MAX_PARAMS

_entries: dict[int, tuple[Callable[..., Any], tuple[bool, ...], bool]] = {}
"""key -> (function, whether each parameter is an i32, whether it returns a value)."""
_keys = itertools.count(1)
_failures: dict[int, BaseException] = {}
"""thread id -> the exception of the host function whose trap that thread reports next."""
_depths: dict[int, int] = {}
"""thread id -> how many host functions that thread is inside (absent: none)."""


def keep_host_exception(exc: BaseException) -> None:
    """Keep the exception a C callback caught on this thread for `take_host_exception`."""
    _failures[get_ident()] = exc


def take_host_exception() -> BaseException | None:
    """The exception a host function raised on this thread since the last call (it made the
    trap being reported), or `None`."""
    return _failures.pop(get_ident(), None)


def _argument(value: int, is_i32: bool) -> int:
    if is_i32:
        return ((value & 0xFFFF_FFFF) ^ 0x8000_0000) - 0x8000_0000
    return value & _MASK64


def in_host_function() -> bool:
    """Whether this thread runs a host function (guest code it calls runs in its frame: a
    call future must not be suspended there, see `_backstop`)."""
    return get_ident() in _depths


@UNCHECKED_CALLBACK
def _trampoline(
    env: int | None, _caller: Any, values: Any, _count: int, _depths: dict[int, int] = _depths
) -> int | None:
    # Nothing may escape: ctypes would print the exception and hand C an undefined pointer.
    # (The depths are bound here for the same reason as `_forget`'s table.)
    ident = 0
    try:
        ident = get_ident()
        _depths[ident] = _depths.get(ident, 0) + 1
        function, params, returns = _entries[env or 0]
        if params:
            result = function(*[_argument(values[i * 2], k) for i, k in enumerate(params)])
        else:
            result = function()
        if returns:
            values[0] = int(result)
        return None
    except BaseException as exc:
        keep_host_exception(exc)
        return capi().trap_new(TRAP_ON_EXCEPTION, len(TRAP_ON_EXCEPTION))
    finally:
        depth = _depths.pop(ident, 1) - 1 if ident else 0
        if depth:
            _depths[ident] = depth


@FINALIZER
def _forget(key: int | None, _table: dict[int, Any] = _entries) -> None:
    # The registry is bound here: a store freed while the interpreter exits may run this
    # after the module's globals are cleared.
    _table.pop(key or 0, None)


def live_host_functions() -> int:
    """How many host functions are alive in the process (their stores not yet freed)."""
    return len(_entries)


def add_to_table(store: Store, table: Extern, sig: Signature, function: Callable[..., Any]) -> int:
    """Append a host function calling `function` to `table` (an export of `store`) and
    return its slot. `sig` is `((param types), (result types))`, each `"i32"` or `"i64"`."""
    params, results = sig
    if (
        len(params) > _MAX_PARAMS
        or len(results) > 1
        or any(k not in _KINDS for k in (*params, *results))
    ):
        raise ValueError(
            f"a host function takes up to {_MAX_PARAMS} i32 and i64 values and returns at "
            f"most one: {sig!r}"
        )
    table_ref = payload(store, table)
    api = capi()
    ty = _functype(api, params, results)
    func = Val()
    func.kind = VAL_FUNCREF
    key = next(_keys)
    _entries[key] = (function, tuple(k == "i32" for k in params), bool(results))
    store.keep(_trampoline, _forget)  # C calls them as long as the store lives
    try:
        api.func_new_unchecked(store.context, ty, _trampoline, key, _forget, byref(func, PAYLOAD))
    finally:
        api.functype_delete(ty)
    previous = c_uint64()
    error = api.table_grow(store.context, table_ref, 1, byref(func), byref(previous))
    raise_error(error, "cannot add a host function to the table")
    return previous.value


def _functype(api: CApi, params: tuple[str, ...], results: tuple[str, ...]) -> int:
    """A new `wasm_functype_t` (the caller deletes it)."""
    vecs = (ValtypeVec(), ValtypeVec())
    for vec, kinds in zip(vecs, (params, results), strict=True):
        types = _Types(*[api.valtype_new(_KINDS[k]) for k in kinds])
        api.valtype_vec_new(byref(vec), len(kinds), types)  # takes the valtypes
    ty = api.functype_new(byref(vecs[0]), byref(vecs[1]))  # takes both vectors
    if not ty:
        raise EngineError(f"wasmtime could not create the function type {(params, results)!r}")
    return ty
