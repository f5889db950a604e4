"""The stacks call futures run on, made here so that an idle guest's can be given back.

Wasmtime runs a call future (`_exports.CallFuture`) on a stack of its own and keeps that
stack with the store between calls. Pages a deep call touched (a deep `JSON.stringify` goes
down most of `MAX_WASM_STACK`) then stay resident as long as the store: 64 pooled guests after
one such cell each held 116 MiB more than before (1.8 MiB a guest), where the guest threads'
few stacks, shared by every guest, had held 3.7 MiB more.

So the engine makes its stacks here (wasmtime's host stack creator, `install`): an anonymous
mapping with a guard page at its bottom, as wasmtime makes its own. The store whose first call
future needs a stack claims it (`claim`, from `CallFuture.poll`), and when its guest goes idle
the pool gives everything below the stack's top `KEEP_RESIDENT` bytes back to the kernel
(`drop_pages`, `madvise(MADV_DONTNEED)`: read again, the pages are zeros, as fresh ones). That
is safe only while no call runs on the stack, so a store with a call future is left alone.
Wasmtime reads a stack's bounds once, when it is made, and starts every call at its top.
"""

from __future__ import annotations

import ctypes
import itertools
import mmap
import threading
from ctypes import POINTER, c_bool, c_int, c_long, c_size_t, c_void_p
from typing import Any, Final, Protocol

from ._capi import FINALIZER, capi

__all__ = ["KEEP_RESIDENT", "HasStack", "claim", "drop_pages", "install", "resident_pages"]

KEEP_RESIDENT: Final = 64 * 1024
"""The top of a stack left resident when its guest goes idle: what a usual turn touches (its
interpreter frames and the host functions' Python: 8 to 12 KiB measured), so the next cell
faults nothing in."""

_PAGE: Final = mmap.PAGESIZE
_PROT_NONE: Final = 0
_MAP_FAILED: Final = ctypes.c_void_p(-1).value


_GET_STACK: Final = ctypes.CFUNCTYPE(c_void_p, c_void_p, POINTER(c_size_t))


class _StackMemory(ctypes.Structure):
    """`wasmtime_stack_memory_t`."""

    _fields_ = (("env", c_void_p), ("get_stack_memory", _GET_STACK), ("finalizer", FINALIZER))


_NEW_STACK: Final = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_size_t, c_bool, POINTER(_StackMemory))


class _StackCreator(ctypes.Structure):
    """`wasmtime_stack_creator_t`."""

    _fields_ = (("env", c_void_p), ("new_stack", _NEW_STACK), ("finalizer", c_void_p))


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap = libc.mmap
        self.mmap.restype = c_void_p
        self.mmap.argtypes = (c_void_p, c_size_t, c_int, c_int, c_int, c_long)
        self.mprotect = libc.mprotect
        self.mprotect.argtypes = (c_void_p, c_size_t, c_int)
        self.madvise = libc.madvise
        self.madvise.argtypes = (c_void_p, c_size_t, c_int)
        self.munmap = libc.munmap
        self.munmap.argtypes = (c_void_p, c_size_t)
        self.mincore = libc.mincore
        self.mincore.argtypes = (c_void_p, c_size_t, c_void_p)


_libc = _Libc()


class _Stack:
    """One mapping: a guard page, then `size` usable bytes from `base` up to the top."""

    __slots__ = ("base", "mapping", "size")

    def __init__(self, size: int) -> None:
        self.size = -(-size // _PAGE) * _PAGE
        length = self.size + _PAGE
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        mapping = _libc.mmap(None, length, _PROT_NONE, flags, -1, 0)
        if mapping in (None, _MAP_FAILED):
            raise MemoryError(f"cannot map a {length}-byte stack (errno {ctypes.get_errno()})")
        self.mapping: int = mapping
        self.base = mapping + _PAGE
        if _libc.mprotect(self.base, self.size, mmap.PROT_READ | mmap.PROT_WRITE):
            _libc.munmap(mapping, length)
            raise MemoryError(f"cannot map a stack writable (errno {ctypes.get_errno()})")


_stacks: dict[int, _Stack] = {}
_keys = itertools.count(1)
_claiming = threading.local()
_FAILED: Final = b"clawcell could not map a stack for a call future (out of memory)"


@_NEW_STACK
def _new_stack(_env: int | None, size: int, _zeroed: bool, out: Any) -> int:
    # Nothing may escape a callback C calls (see `_backstop._on_epoch`): a failure is an error.
    try:
        stack = _Stack(size)
        key = next(_keys)
        _stacks[key] = stack
        memory = out[0]
        memory.env = key
        memory.get_stack_memory = _get_stack
        memory.finalizer = _unmap
        store = getattr(_claiming, "store", None)
        if store is not None:
            store.fiber_stack = key
        return 0
    except BaseException:
        return capi().error_new(_FAILED) or 0


@_GET_STACK
def _get_stack(env: int | None, out_len: Any) -> int:
    stack = _stacks.get(env or 0)
    if stack is None:  # never: wasmtime asks only for stacks it holds
        out_len[0] = 0
        return 0
    out_len[0] = stack.size
    return stack.base + stack.size


@FINALIZER
def _unmap(env: int | None, _table: dict[int, _Stack] = _stacks, _libc: _Libc = _libc) -> None:
    # The registry and libc are bound here: a store freed while the interpreter exits may run
    # this after the module's globals are cleared.
    stack = _table.pop(env or 0, None)
    if stack is not None:
        _libc.munmap(stack.mapping, stack.size + _PAGE)


_CREATOR: Final = _StackCreator(None, _new_stack, None)


def install(api: Any, config: int) -> None:
    """Make `config`'s engine take its call futures' stacks from this module."""
    api.config_host_stack_creator_set(config, ctypes.byref(_CREATOR))


class HasStack(Protocol):
    """A store (`_handles.Store`), as its stack is claimed and given back."""

    fiber_stack: int
    """The key of its call futures' stack (0: none claimed yet)."""

    @property
    def future(self) -> object | None: ...


def claim(store: HasStack, poll: Any, future: int) -> bool:
    """`poll(future)` for `store`, which claims the stack wasmtime makes meanwhile."""
    _claiming.store = store
    try:
        return bool(poll(future))
    finally:
        _claiming.store = None


def drop_pages(store: HasStack) -> None:
    """Give the pages of `store`'s stack below its top `KEEP_RESIDENT` bytes back to the
    kernel, unless a call runs on it (the store has a call future)."""
    key = store.fiber_stack
    if not key or store.future is not None:
        return
    stack = _stacks.get(key)
    if stack is None:  # wasmtime freed it: the next call future claims the next one
        store.fiber_stack = 0
        return
    if stack.size > KEEP_RESIDENT:
        _libc.madvise(stack.base, stack.size - KEEP_RESIDENT, mmap.MADV_DONTNEED)


def resident_pages(store: HasStack) -> int:
    """How many pages of `store`'s stack are resident (0 without one): for tests and benches."""
    stack = _stacks.get(store.fiber_stack)
    if stack is None:
        return 0
    count = stack.size // _PAGE
    vector = (ctypes.c_ubyte * count)()
    if _libc.mincore(stack.base, stack.size, vector):
        raise OSError(ctypes.get_errno(), "mincore failed on a call future's stack")
    return sum(byte & 1 for byte in vector)
