"""A QuickJS instance with the guest controller loaded and the catalog installed.

The controller (`controller.js`) is evaluated once; its completion value is the private
host interface, whose functions the host keeps as JSValue handles. Those handles live in
linear memory, so they stay valid across image resets and snapshots.

Unhandled promise rejections are tracked with QuickJS's host rejection tracker: a rejected
promise without a handler is remembered (promise and reason are kept alive), and forgotten
again if a handler is attached later, even after a `wait`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar

from .._random import random_bytes
from ..errors import RuntimeUnavailableError
from ._callbacks import interrupt_check, rejection_tracker, set_tracker
from ._controller import controller_digest, load_controller
from ._crossing import FIBERS_USABLE, TurnCrossing, run_inline, run_sliced
from ._failure import ENGINE_EXCEPTIONS, EngineFailure, engine_failure
from ._first_segment import FirstSegment
from ._report import StepResult, parse_report
from ._wasm._engine import CompiledReactor
from ._wasm._image_file import StoredImage, guest_image_path, read_image, write_image_soon
from ._wasm._instance import CANONICAL_MEMORY_LIMIT, Instance
from ._wasm._linear_memory import memory_cap
from ._worker import next_lane

if TYPE_CHECKING:  # snapshots load on the first one: a process that never parks never needs them
    from ._wasm._exports import CallFuture
    from ._wasm._snapshot import CanonicalImage

__all__ = ["EPOCH_GRACE_S", "Guest"]

EPOCH_GRACE_S: Final = 0.025
"""How long after a leg's deadline the epoch backstop traps guest code the interrupt handler
could not stop (a long native operation)."""

HEAP_HEADROOM_BYTES: Final = 4 * 1024 * 1024
"""Free allocator space in every pristine image. Wasm memory cannot shrink, so a guest whose
cell grew its memory past the image is dropped rather than reused (`LinearMemory.grown`);
with this much free heap already in the image, most cells never grow it. The free pages are
zeros, which a reset drops instead of copying (`_wasm._pages`), so only the pages a cell touched
cost anything."""

_T = TypeVar("_T")
_CELL_HEAD: Final = "(async () => {\n"
_CELL_TAIL: Final = "\n})"


_ENTRY_POINTS: Final = ("install", "start", "step", "settle", "describe")


class Guest:
    """A reusable guest: one instance, one pristine image, one cell at a time."""

    def __init__(
        self,
        reactor: CompiledReactor,
        *,
        memory_limit_bytes: int,
        install_config: str,
        template: Guest | None = None,
    ) -> None:
        self.deadline = float("inf")
        self.interrupted = False
        """Set when the interrupt handler stopped guest code because `deadline` passed. The
        uncatchable error it throws can still end up as an unobserved rejection inside a job
        (an async generator's step), leaving the cell with no work instead of an error."""
        self.retired = False
        """Set when the guest must not run another cell (its image could not be restored, or
        its segment was stopped): its pool drops it without touching its store."""
        self._stopping = False
        self._stale = False
        self.lent_from: object = None
        """The pool of the executor that handed this guest out (see `QuickJSExecutor`)."""
        self.lane = next_lane()
        """The guest thread that runs this guest's segments (see `run_on_guest_thread`)."""
        self.reactor = reactor
        self._max_memory_bytes = memory_cap(memory_limit_bytes)
        self._rejections: dict[int, tuple[int, int]] = {}
        if template is not None:
            self._set_up(memory_limit_bytes, template=template.instance)
            self._take_handles(template._handles())  # pyright: ignore[reportPrivateUsage]
            return
        # A previous process may have stored this configuration's image (`_image_file`).
        limits = (str(memory_limit_bytes), str(HEAP_HEADROOM_BYTES))
        path = guest_image_path(controller_digest(), install_config, *limits)
        stored = None if path is None else read_image(path, max_size=self._max_memory_bytes)
        if stored is not None:
            try:
                self._set_up(memory_limit_bytes, template=stored)
                self._take_handles(stored.handles)
                return
            except (RuntimeUnavailableError, ValueError, MemoryError, KeyError):
                pass  # it does not fit this process (other callback slots): built anew
        self._set_up(memory_limit_bytes)
        inst = self.instance
        (self._install, self._start, self._step, self._settle, self._describe) = load_controller(
            inst
        )
        inst.set_memory_limit(memory_limit_bytes)
        inst.free_value(inst.call_with_string(self._install, install_config))
        inst.run_jobs()
        # The first compile in a runtime does one-time work (growing runtime tables) that
        # cost every cell ~4 µs when it came after the image: do it once, before.
        inst.free_value(self.compile(""))
        inst.gc()
        inst.reserve_heap(HEAP_HEADROOM_BYTES)
        inst.memory.capture_image()
        self._pristine = self._entry_points()
        if path is not None:
            write_image_soon(path, inst.memory.stored_image(self._handles()))

    def _set_up(
        self,
        memory_limit_bytes: int,
        *,
        template: Instance | StoredImage | None = None,
    ) -> None:
        """A new instance (blank, or a copy of `template`'s image), callbacks in place."""
        self.instance = Instance(
            self.reactor,
            memory_limit_bytes=memory_limit_bytes,
            interrupt=interrupt_check(weakref.ref(self)),
            template=template,
        )
        tracker = rejection_tracker(weakref.WeakMethod(self._on_rejection))
        self._tracker_slot = set_tracker(self.instance, tracker, set_handler=template is None)

    @property
    def snapshots(self) -> bool:
        """A QuickJS guest's parked cell is captured whole by `snapshot`."""
        return True

    # -- host callbacks -------------------------------------------------------------------

    def _handles(self) -> dict[str, int]:
        """The host-held values of this guest's pristine image, by name."""
        names = dict(zip(_ENTRY_POINTS, self._pristine, strict=True))
        return {**self.instance.stored_handles(), **names, "tracker": self._tracker_slot}

    def _take_handles(self, handles: dict[str, int]) -> None:
        """Take over the controller entry points of an image (already loaded)."""
        if self._tracker_slot != handles["tracker"]:
            raise RuntimeUnavailableError("host callback slots differ between guests")
        self._pristine = (
            handles["install"],
            handles["start"],
            handles["step"],
            handles["settle"],
            handles["describe"],
        )
        (self._install, self._start, self._step, self._settle, self._describe) = self._pristine

    def _entry_points(self) -> tuple[int, int, int, int, int]:
        return (self._install, self._start, self._step, self._settle, self._describe)

    def _on_rejection(self, _ctx: int, promise: int, reason: int, handled: int, _op: int) -> None:
        inst = self.instance
        key = promise & 0xFFFF_FFFF
        if handled:
            kept = self._rejections.pop(key, None)
            if kept is not None:
                inst.free_value(kept[0])
                inst.free_value(kept[1])
        elif key not in self._rejections:
            mask = 0xFFFF_FFFF_FFFF_FFFF
            dup = inst._f["JS_DupValue"]  # pyright: ignore[reportPrivateUsage]
            self._rejections[key] = (dup(inst.ctx, promise & mask), dup(inst.ctx, reason & mask))

    # -- cells ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the previous cell: restore the pristine image and entry points in place."""
        self.reset_soon()
        self._restore_image()

    def reset_soon(self) -> None:
        """Forget the previous cell now, and restore the pristine image before guest code runs
        again: the next segment does it first (a cell's first segment begun on the event
        loop's thread, `first_here`, does it there: a copy bounded by the image).

        A restored snapshot replaced the entry points with the ones it carried; they must not
        outlive its run (a forged snapshot would otherwise break every later cell).
        """
        self._rejections.clear()
        self._stopping = False
        (self._install, self._start, self._step, self._settle, self._describe) = self._pristine
        self._stale = True

    def shed(self) -> None:
        """The cell is over and the guest goes idle: give the pages its cell touched in the
        image's zero runs back to the kernel now rather than at the next reset."""
        self.reset_soon()
        self.instance.memory.drop_zero_runs()

    def stop(self) -> None:
        """Stop the running segment at the interrupt handler's next check, and any later one
        at once: its caller was cancelled. The guest is `retired`: the segment may still be
        finishing on its lane when it is released. Safe from any thread (attribute writes)."""
        self._stopping = True
        self.retired = True
        self.deadline = float("-inf")

    def _begin(self, deadline: float) -> None:
        self.deadline = float("-inf") if self._stopping else deadline
        self.interrupted = False

    def _restore_image(self) -> None:
        """Restore the pristine image if `reset_soon` left it to do; a guest whose image
        could not be restored is `retired` (never handed out again)."""
        if not self._stale:
            return
        try:
            self.instance.memory.reset()
        except BaseException as exc:
            self.retired = True
            raise RuntimeUnavailableError(
                f"a guest's memory could not be reset to its pristine image ({exc!r}); "
                "the guest was retired: run the cell again"
            ) from exc
        self._stale = False

    def compile(self, code: str) -> int:
        """Parse a cell without running any of it; raises `JSException` for a syntax error.

        Only parsing happens here: code that closes the wrapper early (`}); …; (() => {`)
        runs later, in `start`, under the same deadline and error handling as the cell.
        """
        return self.instance.compile(_CELL_HEAD + code + _CELL_TAIL)

    def start_turn(self, script: int) -> StepResult:
        """Start a compiled cell, run every pending job and report: one guest crossing."""
        inst = self.instance
        value = inst.start_turn(self._start, self._step, script, random_bytes(16).hex().encode())
        return parse_report(inst.take_string(value, strict=True))

    def start_future(self, script: int) -> CallFuture:
        """`start_turn`'s crossing as a call future (see `_first_segment`), not yet run."""
        seed = random_bytes(16).hex().encode()  # the cell's `Math.random` seed
        return self.instance.start_future(self._start, self._step, script, seed)

    # -- segments: guest code under a leg's deadline --------------------------------------

    def parse_cell(self, code: str, deadline: float) -> int | EngineFailure:
        """Parse a cell under `deadline` (parsing counts in the budget, spec §2.5): the
        compiled script, or the failure (a `syntax_error` when the code does not parse).

        Raises:
            RuntimeUnavailableError: the guest's pristine image could not be restored.
        """
        return self._guarded(lambda: self.compile(code), deadline, parsing=True)

    def run_segment(
        self, script: int | None, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure:
        """Start a compiled cell (its first segment) or settle `batch`, and run the guest
        until it waits on the host again: the step report, or why guest code stopped."""
        if script is None:  # settle, run every job, report: one crossing, here
            if self._stale:
                self._restore_image()
            self.deadline = float("-inf") if self._stopping else deadline  # `_begin`, inline
            self.interrupted = False
            handles = (self._settle, self._step)
            return run_inline(self.instance, handles, batch, deadline, deadline + EPOCH_GRACE_S)
        if batch is not None:
            raise ValueError(
                f"a cell's first segment settles no batch (got {batch!r}): "
                "settle it in the next run_segment, with script=None"
            )
        return self._guarded(lambda: self.start_turn(script), deadline)

    def turn_here(
        self, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure | TurnCrossing | None:
        """`run_segment(None, batch, deadline)` begun on this thread, the event loop's, for
        a slice (see `_crossing`): its result, or the rest of it for a guest thread; `None`
        when the image must be restored first (`run_segment` does it off the loop)."""
        if self._stale:
            return None
        self._begin(deadline)
        handles = (self._settle, self._step)
        return run_sliced(self.instance, handles, batch, deadline, deadline + EPOCH_GRACE_S)

    def first_here(self, code: str, deadline: float) -> FirstSegment | None:
        """The first segment begun on this thread, the event loop's, the image restored
        (see `_first_segment`); `None` without call futures (`FIBERS_USABLE`).

        Raises:
            RuntimeUnavailableError: the guest's pristine image could not be restored.
        """
        if not FIBERS_USABLE:
            return None
        self._restore_image()
        self._begin(deadline)
        source = _CELL_HEAD + code + _CELL_TAIL
        return FirstSegment(self, source, deadline, deadline + EPOCH_GRACE_S)

    def describe_rejection(self, deadline: float) -> str | EngineFailure | None:
        """The oldest unhandled rejection's text (`None` without one), under `deadline`: it
        reads the reason's `name` and `message`, which may be guest getters that never
        return (D5). A `thrown` failure means describing it threw."""
        return self._guarded(self.unhandled_rejection, deadline)

    def _guarded(
        self, work: Callable[[], _T], deadline: float, *, parsing: bool = False
    ) -> _T | EngineFailure:
        """`work()` as guest code under `deadline`: the image restored first, the backstop
        armed around it, and an engine failure returned instead of raised."""
        self._restore_image()
        self._begin(deadline)
        token = self.instance.arm_backstop(deadline + EPOCH_GRACE_S)
        try:
            return work()
        except ENGINE_EXCEPTIONS as exc:
            return engine_failure(exc, deadline=deadline, parsing=parsing)
        finally:
            self.instance.disarm_backstop(token)

    # -- snapshots --------------------------------------------------------------------------

    def canonical(self) -> CanonicalImage:
        """The process's canonical image (computed on first use, from two fresh images)."""
        from ._wasm._snapshot import CanonicalImage

        if not _canonical:
            first, second = _fresh_image(self.reactor), _fresh_image(self.reactor)
            _canonical.append(CanonicalImage.of(first, second))
        return _canonical[0]

    def snapshot(self) -> bytes:
        """The parked cell's whole VM as compressed bytes (see `_wasm._snapshot`)."""
        from ._wasm._snapshot import encode

        self._restore_image()
        meta = {
            "handles": [self._install, self._start, self._step, self._settle, self._describe],
            "rejections": [[k, p, r] for k, (p, r) in self._rejections.items()],
        }
        memory = self.instance.memory
        return encode(memory, self.canonical(), stack_pointer=memory.stack_pointer, meta=meta)

    def snapshot_bound(self) -> int:
        """An upper bound of `len(self.snapshot())`, known without taking the snapshot."""
        from ._wasm._snapshot import encoded_size_bound

        # Handles are at most 20 digits each; a rejection entry is three such numbers.
        meta_bytes = 128 + 72 * len(self._rejections)
        return encoded_size_bound(self.instance.memory.size, meta_bytes)

    def restore(self, blob: bytes) -> None:
        """Continue a snapshot in this guest (its previous cell is discarded).

        Raises:
            SnapshotError: the bytes cannot be restored in this process.
        """
        from ._wasm._snapshot import decode, meta_ints, meta_list

        state = decode(blob, self.canonical(), max_memory_bytes=self._max_memory_bytes)
        entry_points = meta_ints(state.meta.get("handles"), 5)
        rejections = [meta_ints(item, 3) for item in meta_list(state.meta.get("rejections", []))]
        self.instance.memory.load_pages(
            state.size, state.pages, state.contents, state.stack_pointer, self.canonical().data
        )
        self._stale = False  # the snapshot replaced the whole image
        (self._install, self._start, self._step, self._settle, self._describe) = entry_points
        self._rejections = {k: (p, r) for k, p, r in rejections}

    @property
    def has_unhandled_rejection(self) -> bool:
        return bool(self._rejections)

    @property
    def startup_s(self) -> float:
        """A QuickJS guest is ready when it is handed out: 0."""
        return 0.0

    def unhandled_rejection(self) -> str | None:
        """The description of the oldest still-unhandled rejection, if any."""
        if not self._rejections:
            return None
        inst = self.instance
        _promise, reason = next(iter(self._rejections.values()))
        return inst.take_string(inst.call(self._describe, reason))


def _fresh_image(reactor: CompiledReactor) -> bytes:
    """The memory of a new instance right after the controller was evaluated, before any
    install: what the canonical image is made of (built twice, once per process)."""
    inst = Instance(reactor, memory_limit_bytes=CANONICAL_MEMORY_LIMIT, interrupt=lambda: False)
    set_tracker(inst, lambda *_: None, set_handler=True)
    load_controller(inst)
    return inst.memory.copy()


_canonical: list[CanonicalImage] = []
