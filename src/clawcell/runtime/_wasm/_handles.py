"""Owning wrappers of wasmtime's C objects (`_capi`): engine, module, linker, store.

Each wrapper frees what it owns exactly once and keeps what must outlive it: a module and a
store hold their engine, so an engine is freed after them. An engine, module or linker is
freed by `close()` or when it is collected (but not once the interpreter is finalizing: what
is alive then is left to the operating system, see `_Owned.__del__`), and using it after
`close()` raises `EngineError` (wasmtime shares them by reference count: a store or instance
made from one keeps what it needs). A store has no `close()`: it is freed only when it is
collected. Every object that passes its context to C (an `Export`, a memory, a fast call)
holds the store, so nothing can use a freed store, free it while its guest code or one of its
host functions runs, or free it from another thread during a call. Exports are read from an
instance into `Extern` values that belong to their store (they are indices into it, freed
with it).

A store also holds every C callback it hands to wasmtime (`keep`): the C function pointer of
a ctypes callback is valid only while the Python object lives, and a store's finalizers run
when it is freed, which at interpreter exit may be after the defining module's globals
are cleared.
"""

from __future__ import annotations

import ctypes
import os
import sys
import weakref
from collections.abc import Callable
from ctypes import byref, c_void_p
from typing import Any, Final, Protocol

from .._process import fork_count
from ._capi import (
    EXTERN_FUNC,
    INSTANCE_BYTES,
    KIND_NAMES,
    PAYLOAD,
    ByteVec,
    CApi,
    EngineError,
    Extern,
    ValtypeVec,
    capi,
    error_text,
    raise_error,
    trap_text,
)
from ._stacks import install as install_stacks

__all__ = [
    "CallInFlight",
    "Engine",
    "Export",
    "Linker",
    "Module",
    "Signature",
    "Store",
    "func_signature",
    "payload",
]

Signature = tuple[tuple[str, ...], tuple[str, ...]]
_OPT_LEVEL_SPEED: Final = 1


class _Owned:
    """A C object freed once by `_free(ptr)`, when collected (or at `close()` where the
    subclass offers it)."""

    __slots__ = ("_api", "ptr")

    def __init__(self, api: CApi, ptr: int | None, what: str) -> None:
        if not ptr:
            raise EngineError(f"wasmtime could not create {what}")
        self._api = api
        self.ptr: int = ptr

    def _free(self, ptr: int) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        ptr, self.ptr = self.ptr, 0
        if ptr:
            self._free(ptr)

    def live(self) -> int:
        """The C pointer; raises `EngineError` once the object was closed."""
        ptr = self.ptr
        if not ptr:
            name = type(self).__name__.lower()
            raise EngineError(
                f"this wasmtime {name} was closed ({self!r}): create a new one instead of "
                f"using it after `close()`"
            )
        return ptr

    def __del__(self, _finalizing: Callable[[], bool] = sys.is_finalizing) -> None:
        # Objects still alive when the interpreter finalizes are left to the operating system,
        # which takes the whole process back at once: freeing them one by one (a store unmaps
        # its memory's reservation and its stacks, and runs its finalizers, which would call
        # back into an interpreter being torn down) is work the exit need not do. Bound as a
        # default: module globals may be cleared by then.
        if getattr(self, "ptr", 0) and not _finalizing():
            self._release()


class _Closable(_Owned):
    """An owned object that may also be freed early by `close()` (idempotent)."""

    __slots__ = ()

    def close(self) -> None:
        self._release()


class Engine(_Closable):
    """A `wasm_engine_t`, configured as given (the defaults are wasmtime's)."""

    __slots__ = ()

    def __init__(
        self,
        *,
        epoch_interruption: bool = False,
        max_wasm_stack: int | None = None,
        async_stack_size: int | None = None,
        own_stacks: bool = False,
        memory_reservation: int | None = None,
        memory_reservation_for_growth: int | None = None,
        optimize_for_speed: bool = False,
    ) -> None:
        api = capi()
        config = api.wasm_config_new()
        if epoch_interruption:
            api.config_epoch_interruption_set(config, True)
        if max_wasm_stack is not None:
            api.config_max_wasm_stack_set(config, max_wasm_stack)
        if async_stack_size is not None:
            api.config_async_stack_size_set(config, async_stack_size)
        if own_stacks:  # call futures' stacks from `_stacks`, which can give pages back
            install_stacks(api, config)
        if memory_reservation is not None:
            api.config_memory_reservation_set(config, memory_reservation)
        if memory_reservation_for_growth is not None:
            api.config_memory_reservation_for_growth_set(config, memory_reservation_for_growth)
        if optimize_for_speed:
            api.config_cranelift_opt_level_set(config, _OPT_LEVEL_SPEED)
        if fork_count():
            # A forked child inherits the parent's compile thread pool without its threads:
            # a parallel compile there waits for them forever. It compiles on its own thread.
            api.config_parallel_compilation_set(config, False)
        super().__init__(api, api.engine_new_with_config(config), "an engine")  # takes config

    def _free(self, ptr: int) -> None:
        self._api.engine_delete(ptr)

    def increment_epoch(self) -> None:
        self._api.engine_increment_epoch(self.live())


class Module(_Closable):
    """A compiled `wasmtime_module_t` (it keeps its engine)."""

    __slots__ = ("engine",)

    def __init__(self, engine: Engine, ptr: int) -> None:
        super().__init__(engine._api, ptr, "a module")  # pyright: ignore[reportPrivateUsage]
        self.engine = engine

    @classmethod
    def compile(cls, engine: Engine, wasm: bytes) -> Module:
        """Compile `wasm`; raises `EngineError` with wasmtime's reason."""
        api, out = engine._api, c_void_p()  # pyright: ignore[reportPrivateUsage]
        raise_error(api.module_new(engine.live(), wasm, len(wasm), byref(out)), "cannot compile")
        return cls(engine, out.value or 0)

    @classmethod
    def deserialize_file(cls, engine: Engine, path: str) -> Module:
        """A module `serialize`d earlier, from a file (refused if another build wrote it)."""
        api, out = engine._api, c_void_p()  # pyright: ignore[reportPrivateUsage]
        error = api.module_deserialize_file(engine.live(), os.fsencode(path), byref(out))
        raise_error(error, f"cannot deserialize {path!r}")
        return cls(engine, out.value or 0)

    def serialize(self) -> bytes:
        """The compiled code, for `deserialize_file` in a later process."""
        vec = ByteVec()
        raise_error(self._api.module_serialize(self.live(), byref(vec)), "cannot serialize")
        try:
            return ctypes.string_at(vec.data, vec.size)
        finally:
            self._api.byte_vec_delete(byref(vec))

    def _free(self, ptr: int) -> None:
        self._api.module_delete(ptr)


class CallInFlight(Protocol):
    """A store's call future (`_exports.CallFuture`), as the store sees it."""

    def free(self) -> None: ...


class Store(_Owned):
    """A `wasmtime_store_t` and its context, freed when collected (it keeps its engine; host
    functions and the epoch callback's data are released by the finalizers the store runs
    when freed).

    `future` is the store's call future while one is alive (the C API allows one at a time).
    The store refers to it weakly and the future holds the store, so the future is freed
    first when it is freed by reference counting; a strong reference back would make a cycle
    the collector cannot see whole (the future's function argument is a ctypes `byref`, which
    the collector does not traverse), and the store would never be freed. Freed by the
    collector in one batch of garbage, the two may be finalized in either order, and the weak
    reference is already cleared then; so the future's C pointer is also kept in `calls`, a
    list the two share: whichever is finalized first frees the future (a suspended one is
    unwound, which needs the store)."""

    __slots__ = (
        "__weakref__",
        "_callbacks",
        "calls",
        "context",
        "engine",
        "fiber_stack",
        "future_ref",
    )

    def __init__(self, engine: Engine) -> None:
        api = engine._api  # pyright: ignore[reportPrivateUsage]
        super().__init__(api, api.store_new(engine.live(), None, None), "a store")
        self.engine = engine
        self.context: int = api.store_context(self.ptr)
        self._callbacks: list[object] = []
        self.future_ref: weakref.ref[CallInFlight] | None = None
        """`future`'s weak reference: a call future sets it to the one it keeps to itself,
        since it is begun and freed once per tool call (the property makes one each time)."""
        self.calls = [0]
        """The live call future's `wasmtime_call_future_t` (0: none), shared with it."""
        self.fiber_stack = 0
        """The key of the stack its call futures run on (`_stacks`; 0: none claimed yet)."""

    @property
    def future(self) -> CallInFlight | None:
        """The store's call future while one is alive (see the class's docstring)."""
        ref = self.future_ref
        return None if ref is None else ref()

    @future.setter
    def future(self, future: CallInFlight | None) -> None:
        self.future_ref = None if future is None else weakref.ref(future)

    def keep(self, *callbacks: object) -> None:
        """Keep ctypes callbacks handed to wasmtime for this store alive as long as it."""
        for callback in callbacks:
            if not any(callback is kept for kept in self._callbacks):
                self._callbacks.append(callback)

    def _free(self, ptr: int) -> None:
        calls = self.calls
        call, calls[0] = calls[0], 0
        if call:  # never, but for a future collected with its store: it borrows the store
            self.future_ref = None
            self._api.call_future_delete(call)
        self.context = 0
        self._api.store_delete(ptr)  # runs the finalizers, which `_callbacks` still holds

    def set_wasi(self) -> None:
        """Give the store an empty WASI configuration: no directories, environment,
        arguments or stdio."""
        error = self._api.context_set_wasi(self.context, self._api.wasi_config_new())
        raise_error(error, "cannot configure WASI")

    def set_memory_limit(self, memory_size: int) -> None:
        """Cap each linear memory at `memory_size` bytes (other limits stay unset)."""
        self._api.store_limiter(self.ptr, memory_size, -1, -1, -1, -1)

    def set_epoch_deadline(self, ticks: int) -> None:
        """Trap (or call the epoch callback) `ticks` epochs from now."""
        self._api.context_set_epoch_deadline(self.context, ticks)

    def instantiate(self, module: Module) -> Export:
        """An instance of `module`, which must import nothing."""
        instance = ctypes.create_string_buffer(INSTANCE_BYTES)
        trap = c_void_p()
        error = self._api.instance_new(self.context, module.live(), None, 0, instance, byref(trap))
        _raise_failure(error, trap, "cannot instantiate")
        return Export(self, instance)


def _raise_failure(error: int | None, trap: c_void_p, context: str) -> None:
    if error:
        raise EngineError(f"{context}: {error_text(error)}")
    if trap.value:
        raise EngineError(f"{context}: {trap_text(trap.value)}")


class Linker(_Closable):
    """A `wasmtime_linker_t` with WASI defined."""

    __slots__ = ()

    def __init__(self, engine: Engine) -> None:
        api = engine._api  # pyright: ignore[reportPrivateUsage]
        super().__init__(api, api.linker_new(engine.live()), "a linker")
        raise_error(api.linker_define_wasi(self.ptr), "cannot define WASI")

    def instantiate(self, store: Store, module: Module, what: str = "a module") -> Export:
        """An instance of `module` in `store`, its imports taken from this linker; raises
        `EngineError` ("cannot instantiate {what}: {wasmtime's reason}")."""
        instance = ctypes.create_string_buffer(INSTANCE_BYTES)
        trap = c_void_p()
        error = self._api.linker_instantiate(
            self.live(), store.context, module.live(), instance, byref(trap)
        )
        _raise_failure(error, trap, f"cannot instantiate {what}")
        return Export(store, instance)

    def _free(self, ptr: int) -> None:
        self._api.linker_delete(ptr)


class Export:
    """An instance's exports, read by name into `Extern` values of its store."""

    __slots__ = ("_instance", "store")

    def __init__(self, store: Store, instance: ctypes.Array[ctypes.c_char]) -> None:
        self.store = store
        self._instance = instance

    def get(self, name: str, kind: int) -> Extern | None:
        """The export `name` if it is of `kind` (`EXTERN_FUNC`, ...), else `None`."""
        item = Extern()
        raw = name.encode()
        api = self.store._api  # pyright: ignore[reportPrivateUsage]
        found = api.instance_export_get(
            self.store.context, self._instance, raw, len(raw), byref(item)
        )
        if not found or item.kind != kind:
            return None
        item.owner = self.store
        return item


def payload(store: Store, extern: Extern) -> Any:
    """`byref` to `extern`'s payload, for a C call with `store` (which must be the store the
    extern was read from: wasmtime aborts the process on any other)."""
    if extern.owner is not store:
        raise ValueError(
            f"this export ({extern.owner!r}'s, kind {extern.kind!r}) does not belong to "
            f"{store!r}: use an export read from the same store (`Export.get`)"
        )
    return byref(extern, PAYLOAD)


def func_signature(store: Store, func: Extern) -> Signature:
    """A function export's parameter and result types, as wasm text names them."""
    assert func.kind == EXTERN_FUNC
    api = store._api  # pyright: ignore[reportPrivateUsage]
    ty = api.func_type(store.context, payload(store, func))
    try:
        return _kinds(api, api.functype_params(ty)), _kinds(api, api.functype_results(ty))
    finally:
        api.functype_delete(ty)


def _kinds(api: CApi, vec: int) -> tuple[str, ...]:
    types = ValtypeVec.from_address(vec)
    return tuple(
        KIND_NAMES.get(api.valtype_kind(types.data[i]), "funcref") for i in range(types.size)
    )
