"""One QuickJS runtime inside one wasm instance, driven through fast export calls.

Threat model: the guest is hostile JavaScript. Its whole heap lives in the instance's
linear memory, the WASI configuration is empty (no preopened directories, environment,
arguments or stdio), and the context is raw: no `qjs:std`/`qjs:os` modules. The host only
trusts what it reads back after bounds checks; a trap or an engine error never escapes as
a host crash, and the instance is restored from its image afterwards.

Calls go through the fast export wrappers of `_exports`; linear memory and the pristine image
are `_linear_memory`'s. The module holds the primitives the guest needs from one instance: strings,
calls, jobs and exceptions.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, Final

from ...errors import RuntimeUnavailableError
from .._failure import JSException
from ._backstop import INTERRUPT_SIGNATURE, install_backstop, interrupt_handler
from ._capi import EXTERN_GLOBAL, EXTERN_MEMORY, EXTERN_TABLE
from ._engine import CompiledReactor
from ._exports import SIGNATURES, CallFuture, GuestTrap, export_of, fast_export
from ._externs import GlobalI32, Memory
from ._handles import Signature, Store
from ._host_funcs import add_to_table
from ._image_file import StoredImage
from ._linear_memory import LinearMemory, memory_cap
from ._reactor import STACK_POINTER_EXPORT, TABLE_EXPORT

__all__ = ["TAG_EXCEPTION", "TAG_STRING", "Instance", "value_tag"]

TAG_EXCEPTION: Final = 6
TAG_STRING: Final = -7
UNDEFINED: Final = 3 << 32
JS_STACK_BYTES: Final = 128 * 1024
CANONICAL_MEMORY_LIMIT: Final = 64 * 1024 * 1024
_EVAL_GLOBAL_ASYNC: Final = 0
_EVAL_COMPILE_ONLY: Final = 1 << 5
_MAX_ARGS: Final = 8
_STAGING_BYTES: Final = 64 * 1024
_HANDLES: Final = ("rt", "ctx", "_scratch", "_argv", "_staging", "_filename", "_interrupt_slot")
"""Host-held values pointing into a pristine image (with `raw_strings`), the callback slot last."""


def value_tag(value: int) -> int:
    """A raw JS value's tag (`TAG_STRING`, `TAG_EXCEPTION`, ...)."""
    return ((value >> 32) ^ 0x8000_0000) - 0x8000_0000  # the high half, as a signed int32


class Instance:
    """A QuickJS runtime and context in a fresh wasm instance.

    Args:
        reactor: The process-wide compiled reactor.
        memory_limit_bytes: QuickJS heap limit; the wasm memory is capped a little above it.
        interrupt: Called about every 10,000 interpreter ticks; return True to interrupt.
        template: Start as a copy of this instance's pristine image, or of one another
            process stored (`_image_file`), instead of creating a runtime (see `_clone_of`).
    """

    def __init__(
        self,
        reactor: CompiledReactor,
        *,
        memory_limit_bytes: int,
        interrupt: Callable[[], bool],
        template: Instance | StoredImage | None = None,
    ) -> None:
        self.reactor = reactor
        self.store = Store(reactor.engine)
        self.store.set_wasi()
        self.store.set_memory_limit(memory_cap(memory_limit_bytes))
        self.hard_deadline = install_backstop(self.store)
        exports = reactor.linker.instantiate(self.store, reactor.module, "the QuickJS reactor")
        self.memory = LinearMemory(
            self.store,
            Memory(self.store, export_of(exports, "memory", EXTERN_MEMORY)),
            GlobalI32(self.store, export_of(exports, STACK_POINTER_EXPORT, EXTERN_GLOBAL)),
        )
        self._table = export_of(exports, TABLE_EXPORT, EXTERN_TABLE)
        self._f = {n: fast_export(exports, n, sig) for n, sig in SIGNATURES.items()}
        self._f_init = fast_export(exports, "_initialize", ((), ()))
        self._call_init()
        if template is not None:
            self._clone_of(template, interrupt)
            return
        self.rt = self._f["JS_NewRuntime"]()
        # Every instance starts with the same heap limit, so images taken before
        # `set_memory_limit` are byte-identical across instances and processes.
        self._f["JS_SetMemoryLimit"](self.rt, CANONICAL_MEMORY_LIMIT)
        self._f["JS_SetMaxStackSize"](self.rt, JS_STACK_BYTES)
        self.ctx = self._f["JS_NewContext"](self.rt)
        if not self.rt or not self.ctx:
            raise RuntimeUnavailableError("QuickJS could not create a runtime and context")
        self._install_interrupt(interrupt)
        self._scratch = self._f["malloc"](16)
        # Argument vectors and short strings are staged in buffers allocated once, before
        # the image is captured, so a call costs no guest malloc/free round trips.
        self._argv = self._f["malloc"](8 * _MAX_ARGS)
        self._staging = self._f["malloc"](_STAGING_BYTES)
        self._filename = self.put_cstring(b"openclaw-code-mode:user.js")
        self.raw_strings = False

    # -- construction helpers -------------------------------------------------------------

    def _call_init(self) -> None:
        try:
            self._f_init()
        except GuestTrap as exc:
            raise RuntimeUnavailableError(f"the QuickJS reactor failed to start: {exc}") from exc

    def _clone_of(self, template: Instance | StoredImage, interrupt: Callable[[], bool]) -> None:
        """Become a copy of `template`'s pristine image (its runtime, context and buffers).

        Everything the guest owns lives in linear memory and the stack pointer, and host
        callbacks take the same table slots in every instance, so copying the image is a
        complete copy of a freshly set-up runtime, at a fraction of the cost.
        """
        if isinstance(template, StoredImage):
            self._take_handles(template.handles, interrupt)
            self.memory.load_image(template)
            return
        if not template.memory.image:
            raise RuntimeUnavailableError("a template instance needs a captured image")
        self._take_handles(template.stored_handles(), interrupt)
        self.memory.adopt_image(template.memory)

    def stored_handles(self) -> dict[str, int]:
        """The host-held values of a pristine image, by name (what `_take_handles` takes)."""
        handles = {name.lstrip("_"): int(getattr(self, name)) for name in _HANDLES}
        return {**handles, "raw_strings": int(self.raw_strings)}

    def _take_handles(self, handles: dict[str, int], interrupt: Callable[[], bool]) -> None:
        """Take an image's host-held values; the interrupt callback must get its slot."""
        for name in _HANDLES[:-1]:
            setattr(self, name, handles[name.lstrip("_")])
        self.raw_strings = bool(handles["raw_strings"])
        self._interrupt_slot = self.callback_slot(INTERRUPT_SIGNATURE, interrupt_handler(interrupt))
        if self._interrupt_slot != handles["interrupt_slot"]:
            raise RuntimeUnavailableError("host callback slots differ between instances")

    def callback_slot(self, sig: Signature, callback: Callable[..., Any]) -> int:
        """Add a host function of type `sig` to the table; its slot is its C function pointer."""
        return add_to_table(self.store, self._table, sig, callback)

    def _install_interrupt(self, interrupt: Callable[[], bool]) -> None:
        self._interrupt_slot = self.callback_slot(INTERRUPT_SIGNATURE, interrupt_handler(interrupt))
        self._f["JS_SetInterruptHandler"](self.rt, self._interrupt_slot, 0)

    # -- memory -----------------------------------------------------------------------------

    @property
    def grown(self) -> bool:
        """Linear memory grew past the image (see `LinearMemory.grown`)."""
        return self.memory.grown

    def put_cstring(self, data: bytes) -> int:
        """Copy `data` plus a NUL into guest memory; returns the guest pointer (free it)."""
        ptr = self._f["malloc"](len(data) + 1)
        if not ptr:
            raise MemoryError("guest malloc failed")
        ctypes.memmove(self.memory.base + ptr, data + b"\0", len(data) + 1)
        return ptr

    def free(self, ptr: int) -> None:
        self._f["free"](ptr)

    def reserve_heap(self, size: int) -> None:
        """Grow the guest allocator's free space by `size` bytes (one allocation, freed at
        once): the pages stay part of the image, as free memory. Where the allocation fails,
        the image simply has no such headroom."""
        ptr = self._f["malloc"](size)
        if ptr:
            self._f["free"](ptr)

    def arm_backstop(self, at: float) -> int:
        """Trap guest code of this instance still running at `at` (`time.monotonic()`)
        until `disarm_backstop` is given the returned token. (Two plain calls, not a
        context manager: they run on every bridge round trip.)"""
        self.hard_deadline.at = at
        return self.reactor.watchdog.watch(at)

    def disarm_backstop(self, token: int) -> None:
        self.reactor.watchdog.unwatch(token)
        self.hard_deadline.at = float("inf")

    def set_memory_limit(self, memory_limit_bytes: int) -> None:
        """Set the QuickJS heap limit (the wasm memory cap was fixed at construction)."""
        self._f["JS_SetMemoryLimit"](self.rt, memory_limit_bytes)

    # -- JS values ------------------------------------------------------------------------

    def eval(self, source: str, filename_ptr: int | None = None) -> int:
        """Evaluate global code; returns the completion value or raises `JSException`."""
        data = source.encode("utf-8", "surrogatepass")
        ptr = self.put_cstring(data)
        try:
            value = self._f["JS_Eval"](
                self.ctx, ptr, len(data), filename_ptr or self._filename, _EVAL_GLOBAL_ASYNC
            )
        finally:
            self.free(ptr)
        return self.checked(value)

    def compile(self, source: str) -> int:
        """Parse global code without running it; raises `JSException` for a syntax error.
        (A source that fits goes through the staging buffer: no guest malloc.)"""
        ptr, size, owned = self.stage(source + "\0")  # QuickJS reads up to a NUL
        try:
            return self.checked(self._eval(ptr, size - 1, _EVAL_COMPILE_ONLY))
        finally:
            if owned:
                self.free(owned)

    def compile_future(self, ptr: int, size: int) -> CallFuture:
        """`compile`'s crossing as a call future, on a source `stage`d with a NUL after it
        (`size` without the NUL), not yet run; its value unchecked."""
        return self._f["JS_Eval"].start(self.ctx, ptr, size, self._filename, _EVAL_COMPILE_ONLY)

    def _eval(self, ptr: int, size: int, flags: int) -> int:
        return self._f["JS_Eval"](self.ctx, ptr, size, self._filename, flags)

    def start_turn(self, start: int, step: int, script: int, seed: bytes) -> int:
        """Run a compiled script (consumed), call `start(completion, seed)`, run every
        pending job and return `step()`'s value, in one crossing (`clawcell_start`)."""
        return self.checked(self._f["clawcell_start"](*self._start_args(start, step, script, seed)))

    def start_future(self, start: int, step: int, script: int, seed: bytes) -> CallFuture:
        """`start_turn`'s crossing as a call future, not yet run; its value unchecked."""
        return self._f["clawcell_start"].start(*self._start_args(start, step, script, seed))

    def _start_args(self, start: int, step: int, script: int, seed: bytes) -> tuple[int, ...]:
        ctypes.memmove(self.memory.base + self._staging, seed, len(seed))
        staged = (self._staging, len(seed), self._argv, self._scratch, script)
        return (self.ctx, self.rt, start, step, *staged)

    def call(self, func: int, *args: int) -> int:
        """Call a JS function value with JSValue arguments; raises `JSException`."""
        if len(args) > _MAX_ARGS:
            raise ValueError(f"at most {_MAX_ARGS} arguments")
        if args:
            base = self.memory.base + self._argv
            for i, arg in enumerate(args):
                ctypes.c_uint64.from_address(base + 8 * i).value = arg
        return self.checked(self._f["JS_Call"](self.ctx, func, UNDEFINED, len(args), self._argv))

    def stage(self, text: str | None) -> tuple[int, int, int]:
        """`text` copied into guest memory as UTF-8: `(ptr, size, owned)`, where `owned` is a
        buffer the caller frees after use (0: it fit the staging buffer, which the next
        `stage` overwrites); `None` is `(0, -1, 0)`, `raw_turn`'s "no batch". Raises
        `MemoryError` when the guest cannot allocate a buffer for a large text."""
        if text is None:
            return 0, -1, 0
        data = text.encode("utf-8", "surrogatepass")
        size = len(data)
        if size <= _STAGING_BYTES:  # the common small text
            ctypes.memmove(self.memory.base + self._staging, data, size)
            return self._staging, size, 0
        ptr = self._f["malloc"](size + 1)
        if not ptr:
            raise MemoryError("guest malloc failed")
        ctypes.memmove(self.memory.base + ptr, data, size)
        return ptr, size, ptr

    def raw_turn(self, settle: int, step: int, ptr: int, size: int) -> int:
        """The `clawcell_turn` crossing alone, on a batch `stage` placed: its raw value,
        which may be the exception marker (`checked` reads it); raises `GuestTrap`."""
        return self._f["clawcell_turn"](
            self.ctx, self.rt, settle, step, ptr, size, self._argv, self._scratch
        )

    def turn_future(self, settle: int, step: int, ptr: int, size: int) -> CallFuture:
        """`raw_turn` as a call future, not yet run (`_backstop.run_slice` runs it)."""
        return self._f["clawcell_turn"].start(
            self.ctx, self.rt, settle, step, ptr, size, self._argv, self._scratch
        )

    def call_with_string(self, func: int, text: str) -> int:
        """Call `func(text)` with a fresh JS string; returns the result value."""
        string = self.new_string(text)
        try:
            return self.call(func, string)
        finally:
            self.free_value(string)

    def new_string(self, text: str) -> int:
        ptr, size, owned = self.stage(text)
        try:
            return self.checked(self._f["JS_NewStringLen"](self.ctx, ptr, size))
        finally:
            if owned:
                self.free(owned)

    def get_property(self, obj: int, name: str) -> int:
        ptr = self.put_cstring(name.encode())
        try:
            return self.checked(self._f["JS_GetPropertyStr"](self.ctx, obj, ptr))
        finally:
            self.free(ptr)

    def to_string(self, value: int, *, strict: bool = False) -> str:
        """Convert any JS value to a Python string (lone surrogates survive).

        A value that cannot be converted (its `toString` throws, or the guest has no memory
        left to flatten it) reads as `"[unprintable value]"`, or raises `MemoryError` when
        `strict`.
        """
        ptr = self._f["JS_ToCStringLen2"](self.ctx, self._scratch, value, 0)
        if not ptr:
            self.free_value(self._f["JS_GetException"](self.ctx))
            if strict:
                raise MemoryError("the guest could not convert a value to a string")
            return "[unprintable value]"
        base = self.memory.base
        size = ctypes.c_uint32.from_address(base + self._scratch).value
        text = ctypes.string_at(base + ptr, size).decode("utf-8", "surrogatepass")
        self._f["JS_FreeCString"](self.ctx, ptr)
        return text

    def reads_flat(self, value: int) -> bool:
        """Whether `take_string(value)` only reads memory (a flat string): no guest code."""
        return self.raw_strings and value_tag(value) == TAG_STRING

    def take_string(self, value: int, *, strict: bool = False) -> str:
        """`to_string` then free the value."""
        try:
            if self.reads_flat(value):
                return self.memory.flat_string(value & 0xFFFF_FFFF)
            return self.to_string(value, strict=strict)
        finally:
            self.free_value(value)

    def free_value(self, value: int) -> None:
        if value_tag(value) < 0:
            self._f["JS_FreeValue"](self.ctx, value)

    def run_jobs(self) -> int:
        """Run pending jobs until none is left; returns how many ran. Raises `JSException`."""
        ran = 0
        execute = self._f["JS_ExecutePendingJob"]
        while True:
            status = execute(self.rt, self._scratch)
            if status == 0:
                return ran
            if status & 0x8000_0000:
                raise self._exception()
            ran += 1

    def gc(self) -> None:
        self._f["JS_RunGC"](self.rt)

    def checked(self, value: int) -> int:
        """`value`, or the pending `JSException` if it is the exception marker."""
        if value_tag(value) == TAG_EXCEPTION:
            raise self._exception()
        return value

    def _exception(self) -> JSException:
        error = self._f["JS_GetException"](self.ctx)
        try:
            text = self.to_string(error)
            stack = ""
            if value_tag(error) == -1:  # an object: read its stack without letting it throw
                name = self.put_cstring(b"stack")
                try:
                    prop = self._f["JS_GetPropertyStr"](self.ctx, error, name)
                finally:
                    self.free(name)
                if value_tag(prop) == TAG_EXCEPTION:
                    self.free_value(self._f["JS_GetException"](self.ctx))
                elif value_tag(prop) == -7:  # a string
                    stack = self.take_string(prop)
                else:
                    self.free_value(prop)
            return JSException(text, stack)
        finally:
            self.free_value(error)
