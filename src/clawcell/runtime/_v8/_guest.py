"""A guest of the V8 executor: one Deno worker process that runs one cell at a time.

Each cell gets a fresh V8 context (`node:vm`) in the worker, with the same controller as a
QuickJS guest, so the guest API, the step report and the error texts are the same; only the
engine differs. The worker prepares the next cell's context while it is idle.

Deadlines are enforced from here: every request waits for its reply until the leg's deadline
and then kills the worker (`interrupted`), which is the only way to stop V8 code that never
yields. A worker that died (killed, out of heap, crashed) is never handed out again; the pool
starts another.

A worker that ran a cell has held that session's data in its process (its V8 isolate, the
worker's own realm): `used` marks it, and `V8Executor` never hands it to another session. A
worker whose cell ended in a way the controller did not report (code that broke out of the
cell's wrapper, a step report that does not parse, a request the worker could not answer) is
`suspect`: tampering cannot be ruled out, so it is ended rather than reused.

Parking keeps the cell live in its worker: there is no snapshot. `snapshot()` returns a
marker that `restore()` refuses, so a run parked in a durable store by a V8 cell cannot be
continued after a restart or by another process (`wait` answers with the `SnapshotError`);
the envelope says `replaySafe: false` for such cells.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from ..._random import random_bytes
from ...errors import RuntimeUnavailableError, SnapshotError
from .._failure import EngineFailure
from .._report import StepResult, parse_report
from .._worker import next_lane
from ._process import Channel, WorkerDied, WorkerTimeout
from ._watch import OVERHEAD_MB, ResidentWatch

__all__ = ["LIVE_ONLY_MESSAGE", "V8Guest"]

LIVE_ONLY_MESSAGE: Final = (
    "this run was parked on the V8 executor, whose cells live only in their worker process; "
    "it cannot be continued after a restart or in another process. Run the cell again, or use "
    "the QuickJS executor (the default) for cells that must survive restarts."
)
_MARKER: Final = b"clawcell-v8-live\n"
_BOOT_S: Final = 30.0
"""How long a new worker may take to boot and install the controller."""


class V8Guest:
    """A V8 worker process handed out by `V8Executor` (an `ExecutorGuest`)."""

    @property
    def snapshots(self) -> bool:
        """V8 guests cannot be snapshotted: a parked cell stays live in its worker."""
        return False

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        *,
        controller: str,
        config: str,
        memory_limit: int | None = None,
    ) -> None:
        watch = None
        if memory_limit is not None:
            watch = ResidentWatch(process.pid, memory_limit + OVERHEAD_MB * 1024 * 1024)
        self._channel = Channel(process, watch=watch)
        self.lane = next_lane()
        self.interrupted = False
        self.used = False
        """A cell ran in this worker: it belongs to that cell's session from now on."""
        self.suspect = False
        """A cell ended in a way that rules out no tampering: the worker must not be reused."""
        self.has_unhandled_rejection = False
        self.memory_limit = memory_limit
        """The bytes of heap and buffers a cell may hold (`None`: V8's heap limit only)."""
        self.lent_from: object = None
        """The pool that handed this guest out (see `V8Executor`)."""
        self._booted = False
        self.startup_s = 0.0
        """Seconds the last `parse_cell` waited for this worker to boot."""
        self.config = config
        """The install configuration the worker's next context is (or will be) built with."""
        self._first: StepResult | EngineFailure | None = None
        # The first request (controller and bindings) may not fit the pipe before the worker
        # reads it: written from a thread, so the caller never blocks on a booting worker.
        init: dict[str, Any] = {"op": "init", "controller": controller, "config": config}
        if memory_limit is not None:
            init["memoryLimit"] = memory_limit
        self._boot = threading.Thread(target=self._send_init, args=(init,), daemon=True)
        self._boot.start()

    def _send_init(self, init: dict[str, Any]) -> None:
        try:
            self._channel.send(init, time.monotonic() + _BOOT_S)
        except (WorkerDied, WorkerTimeout):
            self._channel.kill()

    # -- health ------------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether the worker can run another cell."""
        return self._channel.alive()

    def close(self) -> None:
        """End the worker process."""
        self._channel.close()

    @property
    def closer(self) -> Callable[[], None]:
        """Ends the worker without holding this guest (for `weakref.finalize`)."""
        return self._channel.close

    def stop(self) -> None:
        """The awaiting task was cancelled: end the worker (and so the running segment)."""
        self.interrupted = True
        self._channel.kill()

    def reset(self, config: str | None = None) -> None:
        """Forget the cell; the worker prepares a pristine context for the next one while
        it is idle (the request has no reply, so this never waits), installed with `config`
        when given (a worker serves any configuration)."""
        self.has_unhandled_rejection = False
        if config is not None:
            self.config = config
        if not self._booted:
            self._boot.join()  # the init request is written before anything else
        try:
            self._channel.send({"op": "reset", "config": config}, time.monotonic() + 1.0)
        except (WorkerDied, WorkerTimeout):
            self._channel.kill()

    # -- segments ----------------------------------------------------------------------------

    def _request(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        """One request and its reply (raises `WorkerTimeout` or `WorkerDied`)."""
        channel = self._channel
        if not self._booted:
            # A worker still booting is host overhead, as building a QuickJS guest is: the
            # wait does not count in the cell's budget.
            began = time.monotonic()
            self._boot.join()
            reply = channel.receive(began + _BOOT_S)
            if not reply.get("ok"):
                raise WorkerDied(str(reply.get("message", "the worker did not boot")))
            self._booted = True
            self.startup_s = time.monotonic() - began
            deadline += self.startup_s
        channel.send(message, deadline)
        return channel.receive(deadline)

    def _guarded(self, message: dict[str, Any], deadline: float) -> dict[str, Any] | EngineFailure:
        if self.interrupted or not self._channel.alive():
            self.interrupted = True
            return EngineFailure(kind="timeout", message="the V8 worker was stopped")
        try:
            return self._request(message, deadline)
        except WorkerTimeout:
            self.interrupted = True
            return EngineFailure(kind="timeout", message="the V8 worker was killed at the deadline")
        except WorkerDied as died:
            if self._channel.over_memory:
                self.interrupted = True
                return EngineFailure(kind="out_of_memory", message=died.stderr)
            if self._channel.killed and time.monotonic() >= deadline:
                self.interrupted = True
                return EngineFailure(kind="timeout", message="the V8 worker was killed")
            return _death(died.stderr)

    def parse_cell(self, code: str, deadline: float) -> int | EngineFailure:
        """Compile the cell in a fresh context and run its first segment, in one round trip:
        handle `1` (its first segment's result is kept for `run_segment`), or the failure."""
        if not self._booted and not self._channel.alive():
            raise RuntimeUnavailableError("the V8 worker ended before its first cell")
        seed = random_bytes(16).hex()
        self.startup_s = 0.0
        used, self.used = self.used, True
        reply = self._guarded({"op": "start", "code": code, "seed": seed}, deadline)
        if isinstance(reply, EngineFailure):
            self._first = reply
            return 1
        if not reply.get("ok") and reply.get("kind") == "syntax_error":
            self.used = used  # nothing of the cell ran
            return _failure(reply)
        self._first = self._result(reply)
        return 1

    def run_segment(
        self, script: int | None, batch: str | None, deadline: float
    ) -> StepResult | EngineFailure:
        """The first segment's result (`script` given), or settle `batch` and run one turn."""
        if script is not None:
            first, self._first = self._first, None
            if first is None:
                return EngineFailure(kind="trap", message="the V8 cell was not started")
            return first
        reply = self._guarded({"op": "run", "batch": batch}, deadline)
        if isinstance(reply, EngineFailure):
            return reply
        return self._result(reply)

    def turn_here(self, batch: str | None, deadline: float) -> None:
        """A V8 turn is one request to the worker process: it is not begun here."""
        del batch, deadline

    def first_here(self, code: str, deadline: float) -> None:
        """A V8 cell's first segment may start its worker process: not begun here."""
        del code, deadline

    def _result(self, reply: dict[str, Any]) -> StepResult | EngineFailure:
        if not reply.get("ok"):
            # The worker, not the controller, reports the failure: the cell's code ran outside
            # the controller's hands (it closed the cell's wrapper), or the controller broke.
            self.suspect = True
            return _failure(reply)
        self.has_unhandled_rejection = bool(reply.get("rejected"))
        try:
            return parse_report(str(reply.get("report")))
        except (MemoryError, LookupError, TypeError, ValueError) as exc:
            self.suspect = True
            return EngineFailure(
                kind="trap", message=f"the V8 worker's step report is broken ({exc})"
            )

    def describe_rejection(self, deadline: float) -> str | EngineFailure | None:
        """The oldest unhandled rejection's text, or `None` without one."""
        reply = self._guarded({"op": "describe"}, deadline)
        if isinstance(reply, EngineFailure):
            return reply
        if not reply.get("ok"):
            self.suspect = True
            return _failure(reply)
        text = reply.get("text")
        return None if text is None else str(text)

    # -- parking -----------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """A marker, not a snapshot: the cell lives only in this worker."""
        return _MARKER

    def snapshot_bound(self) -> int:
        return len(_MARKER)

    def restore(self, blob: bytes) -> None:
        """Always refused: a V8 cell cannot continue outside the worker that ran it."""
        raise SnapshotError(LIVE_ONLY_MESSAGE)


def _failure(reply: dict[str, Any]) -> EngineFailure:
    kind = "syntax_error" if reply.get("kind") == "syntax_error" else "thrown"
    return EngineFailure(
        kind=kind, message=str(reply.get("message", "")), stack=str(reply.get("stack", ""))
    )


def _death(stderr: str) -> EngineFailure:
    """Why a worker ended on its own: V8 ran out of heap, or it crashed."""
    lowered = stderr.lower()
    if "out of memory" in lowered or "heap limit" in lowered or "allocation failed" in lowered:
        return EngineFailure(kind="out_of_memory", message=_first_line(stderr))
    return EngineFailure(kind="trap", message=f"the V8 worker ended: {_first_line(stderr)}")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return "no message"
