"""wasmtime's C API, bound with ctypes: the library wasmtime-py ships, and the entry points
clawcell calls.

Why not wasmtime-py's classes: importing the package declares a ctypes prototype for every
one of the C API's ~770 functions and ~140 structures, about a fifth of a cold start's
instructions, while a QuickJS guest needs about fifty of them. The package stays the
dependency that ships the shared library (`wasmtime/<platform>-<machine>/`); it is located
with the import system's finders, which do not run the package's `__init__`, and loaded on
first use.

The structures below are the C API's as of wasmtime 51 (`wasmtime/extern.h`, `val.h`,
`instance.h`). They are passed to the library by pointer, so what matters is each one's size
and where its payload starts; `_library` finds the library and refuses one whose version
(or platform) has layouts not known here rather than guessing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from ctypes import POINTER, c_bool, c_int64, c_size_t, c_uint8, c_uint64, c_void_p
from typing import Any, Final

from ...errors import RuntimeUnavailableError
from ._library import LAYOUT_MAJORS, REQUIREMENT, checked_library, library_path, wasmtime_version

__all__ = [
    "EPOCH_CALLBACK",
    "EXTERN_FUNC",
    "EXTERN_GLOBAL",
    "EXTERN_MEMORY",
    "EXTERN_TABLE",
    "FINALIZER",
    "INSTANCE_BYTES",
    "KIND_NAMES",
    "LAYOUT_MAJORS",
    "PAYLOAD",
    "REQUIREMENT",
    "UNCHECKED_CALLBACK",
    "UPDATE_DEADLINE_CONTINUE",
    "UPDATE_DEADLINE_YIELD",
    "VAL_FUNCREF",
    "VAL_I32",
    "VAL_I64",
    "VAL_RAW_BYTES",
    "ByteVec",
    "CApi",
    "EngineError",
    "Extern",
    "Val",
    "ValtypeVec",
    "capi",
    "error_text",
    "library_path",
    "raise_error",
    "trap_text",
    "wasmtime_version",
]


EXTERN_FUNC: Final = 0
EXTERN_GLOBAL: Final = 1
EXTERN_TABLE: Final = 2
EXTERN_MEMORY: Final = 3
VAL_I32: Final = 0
VAL_I64: Final = 1
VAL_FUNCREF: Final = 5
"""`wasmtime_valkind_t` of a function reference (a `wasmtime_val_t`'s kind)."""
KIND_NAMES: Final = {0: "i32", 1: "i64", 2: "f32", 3: "f64", 4: "v128", 128: "externref"}
"""`wasm_valkind_t` as wasm text names it (129, funcref, is absent: no export takes one)."""
UPDATE_DEADLINE_CONTINUE: Final = 0
UPDATE_DEADLINE_YIELD: Final = 1
"""The epoch callback's answer that suspends a call future (`wasmtime_call_future_poll`
returns false) rather than running on; a synchronous call must never be given it."""


class EngineError(RuntimeUnavailableError):
    """wasmtime reported an error (its message is wasmtime's own text)."""


class ByteVec(ctypes.Structure):
    """`wasm_byte_vec_t` (also `wasm_name_t`, `wasm_message_t`)."""

    _fields_ = (("size", c_size_t), ("data", c_void_p))


class ValtypeVec(ctypes.Structure):
    """`wasm_valtype_vec_t`: `data` points to `size` pointers to `wasm_valtype_t`."""

    _fields_ = (("size", c_size_t), ("data", POINTER(c_void_p)))


class Extern(ctypes.Structure):
    """`wasmtime_extern_t`: a kind byte, then (at offset 8) the 24-byte union of a
    `wasmtime_func_t` (16 bytes), `wasmtime_global_t`, `wasmtime_table_t` or
    `wasmtime_memory_t` (24 bytes each). Pass `ctypes.byref(extern, PAYLOAD)` where the C API
    takes one of those.

    `owner` is the store the extern was read from (`_handles.Export.get`): wasmtime aborts
    the process when an extern is used with another store, so it is checked first
    (`_handles.payload`)."""

    _fields_ = (("kind", c_uint8), ("of", c_uint64 * 3))
    owner: object = None


class Val(ctypes.Structure):
    """`wasmtime_val_t`: a kind byte, then (at offset 8) the value's 24-byte union (an i32 is
    the low half of the first word, a funcref the 16 bytes of its `wasmtime_func_t`)."""

    _fields_ = (("kind", c_uint8), ("of", c_uint64 * 3))


PAYLOAD: Final = 8
"""Where the union starts in `Extern` and `Val`."""
FUNC_BYTES: Final = 16
VAL_RAW_BYTES: Final = 16
"""`sizeof(wasmtime_val_raw_t)`: an i32 or i64 argument or result is its first word."""
INSTANCE_BYTES: Final = 16
"""`sizeof(wasmtime_instance_t)`."""
assert ctypes.sizeof(Extern) == 32 and Extern.of.offset == PAYLOAD
assert ctypes.sizeof(Val) == 32 and Val.of.offset == PAYLOAD

EPOCH_CALLBACK: Final = ctypes.CFUNCTYPE(
    c_void_p, c_void_p, c_void_p, POINTER(c_uint64), POINTER(c_uint8)
)
"""`wasmtime_error_t *(*)(wasmtime_context_t *, void *data, uint64_t *delta,
wasmtime_update_deadline_kind_t *kind)`."""
UNCHECKED_CALLBACK: Final = ctypes.CFUNCTYPE(
    c_void_p, c_void_p, c_void_p, POINTER(c_int64), c_size_t
)
"""`wasm_trap_t *(*)(void *env, wasmtime_caller_t *, wasmtime_val_raw_t *, size_t)`."""
FINALIZER: Final = ctypes.CFUNCTYPE(None, c_void_p)


class CApi:
    """The entry points clawcell calls, each declared with its C prototype (pointers are
    `c_void_p`: handles travel as integers)."""

    def __init__(self, dll: ctypes.CDLL) -> None:
        def fn(name: str, restype: Any, *argtypes: Any) -> Any:
            entry = getattr(dll, name)
            entry.restype, entry.argtypes = restype, argtypes
            return entry

        def held(name: str, restype: Any, *argtypes: Any) -> Any:
            entry = ctypes.PYFUNCTYPE(restype, *argtypes)((name, dll))
            entry.__name__ = name  # as `dll`'s own attributes are named
            return entry

        self._declare_engine(fn)
        self._declare_store(fn)
        self._declare_instance(fn)
        # A call future is made and freed once per turn (each tool call), and neither runs
        # guest code nor waits (freeing a suspended one unwinds its stack, which holds no
        # Python frame: `_backstop`): these two keep the GIL, where a ctypes call lets it
        # go and takes it back (a fifth of the instructions the two calls cost).
        p, size = c_void_p, c_size_t
        self.func_call_async = held("wasmtime_func_call_async", p, p, p, p, size, p, size, p, p)
        self.call_future_delete = held("wasmtime_call_future_delete", None, p)

    def _declare_engine(self, fn: Callable[..., Any]) -> None:
        p, u64, size = c_void_p, c_uint64, c_size_t
        self.wasm_config_new = fn("wasm_config_new", p)
        self.config_epoch_interruption_set = fn(
            "wasmtime_config_epoch_interruption_set", None, p, c_bool
        )
        self.config_parallel_compilation_set = fn(
            "wasmtime_config_parallel_compilation_set", None, p, c_bool
        )
        self.config_max_wasm_stack_set = fn("wasmtime_config_max_wasm_stack_set", None, p, size)
        self.config_memory_reservation_set = fn(
            "wasmtime_config_memory_reservation_set", None, p, u64
        )
        self.config_memory_reservation_for_growth_set = fn(
            "wasmtime_config_memory_reservation_for_growth_set", None, p, u64
        )
        self.config_async_stack_size_set = fn("wasmtime_config_async_stack_size_set", None, p, u64)
        self.config_host_stack_creator_set = fn(
            "wasmtime_config_host_stack_creator_set", None, p, p
        )
        self.config_cranelift_opt_level_set = fn(
            "wasmtime_config_cranelift_opt_level_set", None, p, c_uint8
        )
        self.engine_new_with_config = fn("wasm_engine_new_with_config", p, p)
        self.engine_delete = fn("wasm_engine_delete", None, p)
        self.engine_increment_epoch = fn("wasmtime_engine_increment_epoch", None, p)
        # modules and linkers
        self.module_new = fn("wasmtime_module_new", p, p, p, size, p)
        self.module_deserialize_file = fn(
            "wasmtime_module_deserialize_file", p, p, ctypes.c_char_p, p
        )
        self.module_serialize = fn("wasmtime_module_serialize", p, p, p)
        self.module_delete = fn("wasmtime_module_delete", None, p)
        self.linker_new = fn("wasmtime_linker_new", p, p)
        self.linker_define_wasi = fn("wasmtime_linker_define_wasi", p, p)
        self.linker_instantiate = fn("wasmtime_linker_instantiate", p, p, p, p, p, p)
        self.linker_delete = fn("wasmtime_linker_delete", None, p)

    def _declare_store(self, fn: Callable[..., Any]) -> None:
        p, u64 = c_void_p, c_uint64
        self.store_new = fn("wasmtime_store_new", p, p, p, p)
        self.store_context = fn("wasmtime_store_context", p, p)
        self.store_delete = fn("wasmtime_store_delete", None, p)
        self.store_limiter = fn(
            "wasmtime_store_limiter", None, p, c_int64, c_int64, c_int64, c_int64, c_int64
        )
        self.store_epoch_deadline_callback = fn(
            "wasmtime_store_epoch_deadline_callback", None, p, p, p, p
        )
        self.context_set_epoch_deadline = fn("wasmtime_context_set_epoch_deadline", None, p, u64)
        self.wasi_config_new = fn("wasi_config_new", p)
        self.context_set_wasi = fn("wasmtime_context_set_wasi", p, p, p)

    def _declare_instance(self, fn: Callable[..., Any]) -> None:
        p, u64, size = c_void_p, c_uint64, c_size_t
        self.instance_new = fn("wasmtime_instance_new", p, p, p, p, size, p, p)
        self.instance_export_get = fn("wasmtime_instance_export_get", c_bool, p, p, p, size, p)
        self.func_type = fn("wasmtime_func_type", p, p, p)
        self.func_call_unchecked = fn("wasmtime_func_call_unchecked", p, p, p, p, size, p)
        self.call_future_poll = fn("wasmtime_call_future_poll", c_bool, p)
        self.func_new_unchecked = fn("wasmtime_func_new_unchecked", None, p, p, p, p, p, p)
        self.functype_new = fn("wasm_functype_new", p, p, p)
        self.functype_params = fn("wasm_functype_params", p, p)
        self.functype_results = fn("wasm_functype_results", p, p)
        self.functype_delete = fn("wasm_functype_delete", None, p)
        self.valtype_new = fn("wasm_valtype_new", p, c_uint8)
        self.valtype_kind = fn("wasm_valtype_kind", c_uint8, p)
        self.valtype_vec_new = fn("wasm_valtype_vec_new", None, p, size, p)
        self.memory_data = fn("wasmtime_memory_data", p, p, p)
        self.memory_data_size = fn("wasmtime_memory_data_size", size, p, p)
        self.memory_size = fn("wasmtime_memory_size", u64, p, p)
        self.memory_grow = fn("wasmtime_memory_grow", p, p, p, u64, p)
        self.global_get = fn("wasmtime_global_get", None, p, p, p)
        self.global_set = fn("wasmtime_global_set", p, p, p, p)
        self.table_grow = fn("wasmtime_table_grow", p, p, p, u64, p, p)
        self.error_new = fn("wasmtime_error_new", p, ctypes.c_char_p)
        self.error_message = fn("wasmtime_error_message", None, p, p)
        self.error_delete = fn("wasmtime_error_delete", None, p)
        self.trap_new = fn("wasmtime_trap_new", p, ctypes.c_char_p, size)
        self.trap_message = fn("wasm_trap_message", None, p, p)
        self.trap_delete = fn("wasm_trap_delete", None, p)
        self.byte_vec_delete = fn("wasm_byte_vec_delete", None, p)


_loaded: list[CApi] = []


def capi() -> CApi:
    """The library's entry points, loaded and declared on first use (once per process)."""
    if not _loaded:
        path = checked_library()
        try:
            dll = ctypes.CDLL(path)
        except OSError as exc:
            raise RuntimeUnavailableError(
                f"cannot load wasmtime's library {path!r} ({exc}): reinstall it "
                f"(`pip install --force-reinstall '{REQUIREMENT}'`)"
            ) from exc
        _loaded.append(CApi(dll))
    return _loaded[0]


def error_text(error: int) -> str:
    """A `wasmtime_error_t`'s message; the error is freed."""
    api = capi()
    text = _message(api.error_message, error)
    api.error_delete(error)
    return text


def trap_text(trap: int) -> str:
    """A `wasm_trap_t`'s message (without the C API's trailing NUL); the trap is freed."""
    api = capi()
    text = _message(api.trap_message, trap).removesuffix("\0")
    api.trap_delete(trap)
    return text


def _message(read: Any, handle: int) -> str:
    vec = ByteVec()
    read(handle, ctypes.byref(vec))
    try:
        return ctypes.string_at(vec.data, vec.size).decode("utf-8", "replace") if vec.size else ""
    finally:
        capi().byte_vec_delete(ctypes.byref(vec))


def raise_error(error: int | None, context: str) -> None:
    """Raise `EngineError` (`context: wasmtime's message`) if `error` is set (it is freed)."""
    if error:
        raise EngineError(f"{context}: {error_text(error)}")
