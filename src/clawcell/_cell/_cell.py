"""One cell's life: start, drain and settle bridge requests, park, resume, finish.

A cell owns its guest from `exec` until it completes, fails or parks. Each `exec` and each
`wait` is one *leg* with its own wall-clock budget (spec §2.5):

1. run guest jobs until the microtask queue is empty, then take one `step` report
   (new output, admitted requests, the cell's state);
2. dispatch new requests as asyncio tasks; a `yield` request parks the cell at once;
3. if the value is ready and nothing is outstanding, the cell completes (unless a rejection
   is still unhandled); if nothing is outstanding and no value is ready, the cell is stuck;
4. otherwise wait for settlements (any one while the cell awaits, all of them once its
   value is ready) within the remaining budget, settle them in one batch, and repeat;
5. when the budget runs out with requests still pending, the cell parks (`waiting`).

Guest code runs in segments (`Guest.parse_cell`, `run_segment`, `describe_rejection`): off
the event loop, under the leg's deadline and the epoch backstop; guest code that stops
without a result is an `EngineFailure`, whose kind `_failures` turns into the envelope's.
Request arguments are admitted against the host budgets of `_requests` before they are
parsed; the requests themselves, their tasks and their saved form are `_pending`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final, Literal

from .._progress import Progress
from ..approvals import RunApprovals
from ..runtime import EngineFailure, ExecutorGuest, SegmentRunner, StepResult, wire
from . import _failures
from ._bridge import Bridge, Reply, counts_as_dispatch, encode_settle_batch
from ._failures import TIMEOUT_MESSAGE, UNHANDLED_MESSAGE, FailureCode, classify, failure_of
from ._outcome import LegOutcome
from ._pending import RESTART_MESSAGE, PendingRequest, PendingRequests, parks_at_once
from ._segments import off_loop, run_first, run_turn

__all__ = ["RESTART_MESSAGE", "Cell"]

STUCK_MESSAGE: Final = "code mode promise is pending without host work"
LOOP_TURN_S: Final = 0.001  # at least one loop turn this often in a leg (see `_settlements`)


class Cell:
    """A running or parked cell and everything the host holds for it. The run lifecycle asks
    it to do things through methods and reads it through properties; it never writes its state."""

    def __init__(
        self,
        *,
        guest: ExecutorGuest,
        bridge: Bridge,
        guard: Callable[[str, list[Any]], str | None] | None = None,
        runner: SegmentRunner | None = None,
    ) -> None:
        self._guest = guest
        self._bridge = bridge
        self._guard = guard
        self._runner = runner
        self._output: list[str] = []
        self._dispatch_started = False
        self._value_ready = False
        self._value_json: str | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._progress: Progress | None = None
        self._on_settled: Callable[[str, Reply], None] | None = None
        self._pending = PendingRequests(bridge.inbox_bytes)
        self._turn_due = 0.0  # when the loop is next given a turn (see `_settlements`)
        if bridge.approvals is not None:
            bridge.approvals.wake_weakly(self._wake_now)

    # -- what the lifecycle reads and asks ----------------------------------------------

    @property
    def guest(self) -> ExecutorGuest:
        """The guest the cell runs on (released by the lifecycle when the cell ends)."""
        return self._guest

    @property
    def bridge_dispatch_started(self) -> bool:
        """Whether any request reached host work (the envelope's `bridgeDispatchStarted`)."""
        return self._dispatch_started

    @property
    def network_derived(self) -> bool:
        """Whether anything the cell received came from the network (untrusted content)."""
        return self._bridge.network_derived

    def move_to(self, guest: ExecutorGuest) -> None:
        """Continue on `guest`, restored from this cell's snapshot."""
        self._guest = guest

    def report_to(self, progress: Progress | None) -> None:
        """Send this leg's live updates to `progress` (`None`: nobody asked for them)."""
        self._progress = progress

    def on_settled_outside_leg(self, callback: Callable[[str, Reply], None]) -> None:
        """Call `callback` when a host task settles while no leg runs (durable parking)."""
        self._on_settled = callback

    def take_output(self) -> list[str]:
        """The output the guest wrote since the last call, in order."""
        output, self._output = self._output, []
        return output

    @property
    def approvals(self) -> RunApprovals | None:
        """The run's approval gate (the bridge's)."""
        return self._bridge.approvals

    def _wake_now(self) -> None:
        """Re-check whether the cell can progress (a task settled, or a call waits for approval)."""
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    # -- legs -------------------------------------------------------------------------------

    async def start(self, code: str, budget_s: float) -> LegOutcome:
        """First leg: parse and run the cell. Code that does not parse is a `not_parsed`
        outcome (the call is rejected, worded as the release words syntax errors)."""
        deadline = time.monotonic() + budget_s
        # Parsing counts in the budget (spec §2.5) and runs under the backstop, with the first
        # segment (begun on the loop thread, or in one trip to the guest's thread).
        guest, runner = self._guest, self._runner
        outcome = await run_first(guest, runner, code, deadline, self._parse_and_run)
        deadline += self._guest.startup_s  # a V8 worker's boot is not the cell's time
        if outcome[0] is False:  # it did not parse
            if outcome[1].kind == "syntax_error":
                return LegOutcome.not_parsed(_failures.syntax_error_message(outcome[1], code))
            return self._stopped(outcome[1])
        return await self._drive(deadline, first=outcome[1])

    def _parse_and_run(
        self, code: str, deadline: float
    ) -> tuple[Literal[False], EngineFailure] | tuple[Literal[True], StepResult | EngineFailure]:
        """Parse the cell and run its first segment whole (on the guest's thread, or inline
        on the loop thread's path): whether it parsed, and the parse failure or the first
        segment's result."""
        compiled = self._guest.parse_cell(code, deadline)
        if isinstance(compiled, EngineFailure):
            return False, compiled
        return True, self._guest.run_segment(compiled, None, deadline)

    async def resume(self, budget_s: float) -> LegOutcome:
        """A `wait` leg: answer parked yields, then continue the cell."""
        deadline = time.monotonic() + budget_s
        # Most waits answer only their yields: their replies come back at once.
        replies = self._pending.answer_yields() or await self._settlements(deadline)
        if not replies:
            return self._park()
        return await self._drive(deadline, replies)

    def cancel(self) -> None:
        """Cancel every host task of this cell (owner closed or run expired)."""
        self._pending.cancel()

    # -- the loop -----------------------------------------------------------------------

    async def _drive(
        self,
        deadline: float,
        replies: list[Reply] | None = None,
        *,
        first: StepResult | EngineFailure | None = None,
    ) -> LegOutcome:
        try:
            while True:
                if first is not None:
                    report = self._stopped(first) if isinstance(first, EngineFailure) else first
                    first = None
                else:  # the next turn (inline here: a coroutine less every turn)
                    batch = encode_settle_batch(replies) if replies else None
                    if self._runner is None:  # the loop thread's path: `run_turn`'s, inline
                        result = self._guest.run_segment(None, batch, deadline)
                    else:
                        result = await run_turn(self._guest, self._runner, batch, deadline)
                    report = self._stopped(result) if isinstance(result, EngineFailure) else result
                if isinstance(report, LegOutcome):
                    return report
                outcome = self._absorb(report)
                if outcome is not None and outcome.status == "completed":
                    if self._guest.has_unhandled_rejection:
                        return await self._unless_rejected(outcome, deadline)
                    return outcome
                if outcome is not None:
                    return outcome
                report_settled = None if self._progress is None else self._report_settled
                replies = self._pending.settled_now(report_settled, self._on_done, self._turn_due)
                if replies is None:
                    replies = await self._settlements(deadline)
                if not replies:
                    return self._park()
        finally:
            # Every task this leg started and left running reports when it settles.
            self._pending.watch(self._on_done)

    async def _off_loop(self, function: Callable[..., Any], *args: Any) -> Any:
        return await off_loop(self._guest, self._runner, function, *args)

    def _stopped(self, failure: EngineFailure) -> LegOutcome:
        """The failure of guest code that stopped without a result."""
        return self._failed(*failure_of(failure))

    def _absorb(self, report: StepResult) -> LegOutcome | None:
        self._output.extend(report.output)
        if self._progress is not None and report.output:
            self._progress.output(report.output)
        for request_id in report.cancelled:
            self._pending.withdraw(request_id)
        if self._guest.interrupted:  # the deadline stopped it, whatever became of the error (D16)
            return self._failed("timeout", TIMEOUT_MESSAGE)
        # A frontier that overflows the queue or breaks a restart-safe cell's rules is never
        # dispatched (as recorded: `failurePhase: "input"`, `bridgeDispatchStarted: false`),
        # unless earlier frontiers were, and then the bridge phase wins.
        if report.state == wire.STATE_OVERFLOW:
            return self._refused(report.error)
        # Arguments that do not fit the host budgets are answered at once (`_requests`).
        requests = self._pending.admit_all(report.requests)
        refusal = self._refusal(requests) if self._guard is not None else None
        if refusal is not None:
            return self._refused(refusal)
        # Calls start at once (`_call_task`), unless the turn fails or parks on a `yield`: as
        # recorded, none of its calls runs before the envelope then.
        eager = bool(requests) and report.state != wire.STATE_FAILED
        if eager:  # `parks_at_once`, inline for a sequential call's turn
            eager = requests[0][1] != "yield" if len(requests) == 1 else not parks_at_once(requests)
        for request_id, method, args in requests:
            if method == "callValue":  # a tool call (the bulk): `_start_task`, inline
                self._dispatch_started = True
                if self._progress is not None:  # told before an `eager` task's first step
                    self._progress.tool_started(request_id, str(args[0]))
                work = self._bridge.run(request_id, method, args)
                self._pending.start(request_id, method, args, work, eager=eager)
            else:
                self._dispatch(request_id, method, args, eager)
        if report.state == wire.STATE_FAILED:
            return self._failed(*classify(report.error))
        if report.state == wire.STATE_VALUE:
            self._value_ready = True
            self._value_json = report.value_json
        return self._decide()

    def _decide(self) -> LegOutcome | None:
        if self._pending.yields and self._pending.has_yield:
            return self._park()
        if self._pending.running or len(self._pending):  # (running requests are pending)
            return None
        if not self._value_ready:
            return self._failed("internal_error", STUCK_MESSAGE)
        return LegOutcome(status="completed", value_json=self._value_json or "null")

    async def _unless_rejected(self, completed: LegOutcome, deadline: float) -> LegOutcome:
        """`completed`, or the failure of a rejection nobody handled (the guest has one).
        Describing it reads the reason's `name` and `message`, which may be guest getters:
        it runs like any segment, off the loop and under the deadline (D5)."""
        described = await self._off_loop(self._guest.describe_rejection, deadline)
        if isinstance(described, str):
            return self._failed(*classify(described))
        if described is None:
            return completed
        if described.kind == "thrown":  # describing the reason threw
            return self._failed("internal_error", UNHANDLED_MESSAGE)
        return self._stopped(described)

    def _dispatch(self, request_id: str, method: str, args: list[Any], eager: bool) -> None:
        if counts_as_dispatch(method, args):
            self._dispatch_started = True
        if method == "yield":
            self._pending.park_yield(request_id, args)
            return
        reply = self._bridge.run_now(request_id, method, args)
        if reply is not None:
            self._pending.ready(request_id, PendingRequest(method, args, reply=reply))
            return
        self._start_task(request_id, method, args, eager)

    def _start_task(
        self, request_id: str, method: str, args: list[Any], eager: bool = False
    ) -> None:
        # Told before the task starts: an `eager` one takes its first step in `start`.
        if self._progress is not None and method == "callValue":
            self._progress.tool_started(request_id, str(args[0]))
        work = self._bridge.run(request_id, method, args)
        self._pending.start(request_id, method, args, work, eager=eager)

    def _on_done(self, request_id: str, pending: PendingRequest) -> None:
        self._report_settled(request_id, pending)
        if self._on_settled is not None and pending.reply is not None:
            self._on_settled(request_id, pending.reply)
        self._wake_now()

    async def _settlements(self, deadline: float) -> list[Reply]:
        """Settled replies in completion order: any one while the cell awaits, every one
        once its value is ready; none when the budget runs out first."""
        pending = self._pending
        yields = pending.answered_yields() if pending.yields else []
        if pending.running and not yields:
            # Fresh tasks took their first step when they started: most tools are done.
            pending.sweep(self._report_settled)
            if pending.running or time.monotonic() >= self._turn_due:
                # One loop turn lets quick tools finish, and other work (other cells, I/O)
                # run at least every `LOOP_TURN_S` of a leg whose tools never suspend.
                await asyncio.sleep(0)
                self._turn_due = time.monotonic() + LOOP_TURN_S
                pending.sweep(self._report_settled)
        pending.watch(self._on_done)  # the wait below is woken by their done-callbacks
        loop = asyncio.get_running_loop()
        while pending.running and (not pending.has_completed or self._value_ready) and not yields:
            if pending.blocked_on(self._bridge.approvals):
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._wakeup = wakeup = loop.create_future()
            timer = loop.call_later(remaining, self._wake_now)
            try:
                await wakeup
            finally:
                timer.cancel()
                self._wakeup = None
        if self._value_ready and pending.running and not yields:
            return []
        return pending.take(yields)

    def _report_settled(self, request_id: str, pending: PendingRequest) -> None:
        if self._progress is None or pending.method != "callValue" or pending.reply is None:
            return
        self._progress.tool_settled(request_id, str(pending.args[0]), pending.reply.ok)

    def _refused(self, error: str) -> LegOutcome:
        self.cancel()
        phase: Literal["input", "bridge"] = "bridge" if self._dispatch_started else "input"
        return LegOutcome(status="failed", code="invalid_input", phase=phase, error=error)

    def _refusal(self, requests: list[tuple[str, str, list[Any]]]) -> str | None:
        """The first reason the cell's guard gives to refuse one of `requests`."""
        refusals = (self._guard(m, args) for _, m, args in requests) if self._guard else ()
        return next((refusal for refusal in refusals if refusal is not None), None)

    def pending_requests(self) -> list[tuple[str, list[Any]]]:
        """Method and arguments of every request not yet delivered to the guest."""
        return [(item.method, item.args) for _, item in self._pending]

    # -- parking across processes ---------------------------------------------------------

    def host_state(self) -> dict[str, Any]:
        """The host's side of a parked cell as JSON-shaped data (the guest's is a snapshot).
        Requests still running are listed without a reply: a process that continues the
        cell after this one died re-dispatches them only when they are safe to replay."""
        return {
            "pending": self._pending.state(),
            "bridgeDispatchStarted": self._dispatch_started,
            "valueReady": self._value_ready,
            "valueJson": self._value_json,
        }

    @classmethod
    def revive(
        cls,
        state: dict[str, Any],
        *,
        guest: ExecutorGuest,
        bridge: Bridge,
        replay_safe: Callable[[str, list[Any]], bool],
        runner: SegmentRunner | None = None,
        gated: frozenset[str] = frozenset(),
        guard: Callable[[str, list[Any]], str | None] | None = None,
    ) -> Cell:
        """Continue a parked cell whose host state was saved by another process.

        Requests that were running are dispatched again when `replay_safe` allows it, and so
        are the `gated` ones (they were waiting for approval and never ran); others reject
        into the guest with `RESTART_MESSAGE` (`effectStatus: "unknown"`), so nothing runs
        twice silently."""
        cell = cls(guest=guest, bridge=bridge, guard=guard, runner=runner)
        cell._dispatch_started = bool(state.get("bridgeDispatchStarted"))
        cell._value_ready = bool(state.get("valueReady"))
        cell._value_json = state.get("valueJson")
        for entry in state.get("pending", []):
            safe = entry["id"] in gated or replay_safe(str(entry["method"]), list(entry["args"]))
            cell._pending.revive(entry, replay_safe=safe, run=cell._start_task)
        cell._pending.watch(cell._on_done)
        return cell

    # -- outcomes -------------------------------------------------------------------------

    def _park(self) -> LegOutcome:
        pending = tuple((rid, p.method) for rid, p in self._pending)
        reason = "yield" if self._pending.only_yields else "pending_tools"
        if reason == "pending_tools" and self._pending.blocked_on(self._bridge.approvals):
            reason = "approval"
        return LegOutcome(status="waiting", reason=reason, pending=pending)

    def _failed(self, code: FailureCode, error: str) -> LegOutcome:
        self.cancel()
        phase: Literal["guest", "bridge"] = "bridge" if self._dispatch_started else "guest"
        return LegOutcome(status="failed", code=code, phase=phase, error=error)
