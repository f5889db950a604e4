"""The executor seam: what `CodeMode` needs from the thing that runs guests.

Like an HTTP client takes its transport, `CodeMode(executor=…)` takes an `Executor`: it hands
out guests started from a pristine image of one configuration (`acquire`), takes them back
when their cell is over (`release`), and lets go of everything on `close`. A guest
(`ExecutorGuest`) runs one cell at a time in segments under a deadline, and can be
snapshotted while parked and restored elsewhere. Failures of guest code come back as
`EngineFailure` values, never as engine exceptions.

`QuickJSExecutor` (QuickJS-NG on wasmtime, with the process-wide pools of `GuestPool`) is the
default and the only one whose parked cells can be snapshotted; `V8Executor` (`_v8/`, V8 in
Deno worker processes) is the opt-in one for cells that compute. `executor_named` (`_named.py`)
maps the names `CodeMode(executor=…)` and `[limits] executor` take to them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .._lazy import value_class
from ._crossing import TurnCrossing
from ._failure import EngineFailure
from ._first_segment import FirstSegment
from ._guest import Guest
from ._pool import GuestPool
from ._report import StepResult

__all__ = ["Executor", "ExecutorGuest", "GuestConfig", "QuickJSExecutor"]


@value_class
class GuestConfig:
    """What makes two guests interchangeable.

    Attributes:
        memory_limit_bytes: The guest's heap limit.
        install_config: The JSON text the controller's `install` takes: the catalog's
            bindings, the MCP servers' namespaces and the pending-call cap.
    """

    memory_limit_bytes: int
    install_config: str


class ExecutorGuest(Protocol):
    """One guest an executor handed out: a pristine image, one cell at a time.

    Segments run guest code until it waits on the host again; each stops at `deadline`
    (`time.monotonic()`), and guest code that stops without a result returns an
    `EngineFailure`.
    """

    @property
    def lane(self) -> int:
        """The guest thread that runs this guest's segments (see `run_on_guest_thread`)."""
        ...

    @property
    def snapshots(self) -> bool:
        """Whether `snapshot` captures the parked cell (QuickJS), or the cell lives only in
        this guest (V8: `snapshot` returns a marker that `restore` refuses)."""
        ...

    @property
    def interrupted(self) -> bool:
        """The last segment was stopped at its deadline (even if the guest swallowed it)."""
        ...

    @property
    def has_unhandled_rejection(self) -> bool:
        """A rejected promise of the cell has no handler."""
        ...

    @property
    def startup_s(self) -> float:
        """Seconds the last `parse_cell` waited for the guest itself to start (a V8 worker
        still booting; 0 for a QuickJS guest): not the cell's time, so the cell's first leg
        moves its deadline by as much."""
        ...

    def stop(self) -> None:
        """Make the running segment (and any later one) end as soon as it can, as if its
        deadline had passed: the task awaiting it was cancelled. Called from the event loop
        while the segment may be running on another thread; the guest is then released at
        once, and `release` must drop it without waiting for that segment or touching what
        it may still use."""
        ...

    def parse_cell(self, code: str, deadline: float) -> int | EngineFailure:
        """Parse a cell without running it: a handle of the compiled cell, or the failure.

        Raises `RuntimeUnavailableError` when the guest cannot be made pristine first (the
        cell fails with `runtime_unavailable`; the guest must not be handed out again).
        """
        ...

    def run_segment(
        self, script: int | None, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure:
        """Start `script` (first segment) or settle the reply `batch`, and run one turn."""
        ...

    def first_here(self, code: str, deadline: float) -> FirstSegment | None:
        """A cell's first segment (parse `code`, start it) begun on the loop thread for a
        slice (`run_here()` there, `run_rest()` on the guest thread if it returned False,
        then `outcome()`; see `_first_segment`); `None` when it runs whole on the guest
        thread (`parse_cell` then `run_segment`)."""
        ...

    def turn_here(
        self, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure | TurnCrossing | None:
        """`run_segment(None, batch, deadline)` begun on the loop thread for a slice: its
        result, or the rest for a guest thread (`cross()` there, `finish()` on the loop; see
        `_crossing`); `None` when this guest does not split its turns (then `run_segment`
        runs whole on the guest thread)."""
        ...

    def describe_rejection(self, deadline: float) -> str | EngineFailure | None:
        """The oldest unhandled rejection's text, or `None` without one."""
        ...

    def snapshot(self) -> bytes:
        """The parked cell's whole state as bytes another guest can `restore`."""
        ...

    def snapshot_bound(self) -> int:
        """An upper bound of `len(snapshot())`, known without taking it."""
        ...

    def restore(self, blob: bytes) -> None:
        """Continue a snapshot in this guest (raises `SnapshotError` for bad bytes)."""
        ...


@runtime_checkable
class Executor(Protocol):
    """Hands out guests and takes them back."""

    def acquire(self, config: GuestConfig) -> ExecutorGuest:
        """A guest of `config` in its pristine state (raises `RuntimeUnavailableError`)."""
        ...

    def release(self, guest: ExecutorGuest) -> None:
        """Take back a guest whose cell is over; it may be handed out again later. A guest
        that is not lent out (released already) must be ignored: a second release of one
        acquisition is a no-op."""
        ...

    def close(self) -> None:
        """Let go of idle guests; idempotent."""
        ...


class QuickJSExecutor:
    """Runs guests in QuickJS-NG on wasmtime, from one `GuestPool` per configuration.

    Guests of one configuration are shared process-wide (see `GuestPool`), so a new
    executor over the same tools starts on a warm guest. When a new configuration is asked
    for (the MCP servers changed), the idle guests of the others go back to the shelf;
    guests still out are taken back by the pool they came from. `close` puts every idle
    guest back on the shelf; the executor can still be used after it.
    """

    def __init__(self) -> None:
        self._pools: dict[GuestConfig, GuestPool] = {}

    def acquire(self, config: GuestConfig) -> Guest:
        """A pristine guest of `config` (raises `RuntimeUnavailableError`)."""
        pool = self._pools.get(config)
        if pool is None:
            for other in self._pools.values():
                other.close()
            pool = self._pools[config] = GuestPool(
                memory_limit_bytes=config.memory_limit_bytes,
                install_config=config.install_config,
            )
        guest = pool.acquire()
        guest.lent_from = pool
        return guest

    def release(self, guest: ExecutorGuest) -> None:
        """Return `guest` to its pool; one this executor did not hand out, or took back
        already, is ignored (a guest must never be idle twice)."""
        if not isinstance(guest, Guest):
            return
        pool, guest.lent_from = guest.lent_from, None
        if isinstance(pool, GuestPool) and pool in self._pools.values():
            pool.release(guest)

    def close(self) -> None:
        """Put every idle guest back on the process-wide shelf; idempotent."""
        for pool in self._pools.values():
            pool.close()
