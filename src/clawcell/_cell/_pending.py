"""A cell's pending requests: admitted by a guest step, not yet answered back into the guest.

A request is pending from the step that admitted it until its reply goes back to the guest in
a settle batch. It is a running host task, a reply that is ready (answered at once, refused
by the host budgets, or settled), or a parked `yield`. Replies are handed back in completion
order. The pending requests of a parked cell are part of its saved host state (`state` /
`revive`): requests still running are saved without a reply, and a process that continues
the cell dispatches them again only when they are safe to replay.
"""

from __future__ import annotations

import asyncio
import functools
import json
import operator
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from typing import Any, Final, cast

from ..approvals import RunApprovals
from ._bridge import Reply, cancelled_reply, refusal_reply
from ._call_task import start_call
from ._requests import RequestLedger

__all__ = ["RESTART_MESSAGE", "PendingRequest", "PendingRequests", "parks_at_once"]

RESTART_MESSAGE: Final = (
    "Code Mode tool call was interrupted by a host restart and was not run again because "
    "its tool is not marked replay-safe; its effect is unknown. Check current state before "
    "retrying."
)


@dataclass(slots=True)
class PendingRequest:
    """An undelivered request: a running task, a ready reply, or a parked `yield`."""

    method: str
    args: list[Any] = field(default_factory=list[Any])
    task: asyncio.Task[Reply] | None = None
    reply: Reply | None = None
    reason: Any = None

    @property
    def is_yield(self) -> bool:
        """A `yield` that has not been answered yet."""
        return self.method == "yield" and self.reply is None


Settled = Callable[[str, PendingRequest], None]
"""Told about each request whose task settled: `(request_id, request)`."""


class PendingRequests:
    """The pending requests of one cell, their tasks and their argument budget."""

    def __init__(self, inbox_bytes: int) -> None:
        self._items: dict[str, PendingRequest] = {}
        self._completed: deque[str] = deque()
        self.running = 0
        """How many requests are host tasks that have not settled."""
        self.yields = 0
        """How many pending requests are `yield`s (answered or not; read it, never write
        it): most cells make none, and then the `yield` queries below need not be asked."""
        self._ledger = RequestLedger(inbox_bytes)
        self._unwatched: list[tuple[str, asyncio.Task[Reply]]] = []
        """Tasks started without a done-callback yet (see `start` and `watch`)."""

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[tuple[str, PendingRequest]]:
        return iter(self._items.items())

    @property
    def has_completed(self) -> bool:
        """Some reply is ready to go back to the guest."""
        return bool(self._completed)

    @property
    def has_yield(self) -> bool:
        """Some `yield` waits for the next `wait`."""
        return bool(self.yields) and any(p.is_yield for p in self._items.values())

    @property
    def only_yields(self) -> bool:
        """Every pending request is an unanswered `yield`."""
        return all(p.is_yield for p in self._items.values())

    def blocked_on(self, approvals: RunApprovals | None) -> bool:
        """Every running request waits for a decision of `approvals`: no progress is
        possible without one."""
        if approvals is None or not self.running or self._completed:
            return False
        return approvals.blocked >= self.running

    def answered_yields(self) -> list[str]:
        """The ids of the `yield`s a `wait` answered."""
        if not self.yields:
            return []
        return [rid for rid, p in self._items.items() if p.method == "yield" and p.reply]

    def answer_yields(self) -> list[Reply] | None:
        """A `wait` leg began: every parked `yield` resolves.

        A cell that waits for nothing but parked `yield`s (no task, no ready reply: most
        waits) gets their replies back at once, as `take` of the answered ones would give
        them (they are no longer pending); any other cell `None`, its yields answered in
        place for `take`."""
        items = self._items
        only_yields = not self.running and not self._completed and len(items) == self.yields
        if only_yields and all(pending.reply is None for pending in items.values()):
            replies = [_yielded(rid, pending.reason) for rid, pending in items.items()]
            for request_id in items:
                self._ledger.release(request_id)
            items.clear()
            self.yields = 0
            return replies
        for request_id, pending in items.items():
            if pending.is_yield:
                pending.reply = _yielded(request_id, pending.reason)
        return None

    def admit(self, request_id: str, method: str, text: str) -> list[Any] | None:
        """The parsed arguments of a request that fits the host budgets; `None` when it does
        not (it is then answered at once with a catchable error, see `_requests`)."""
        admitted = self.admit_all([[request_id, method, text]])
        return admitted[0][2] if admitted else None

    def admit_all(self, requests: list[list[Any]]) -> list[tuple[str, str, list[Any]]]:
        """`[id, method, argumentsText]` requests whose arguments fit the host budgets, with
        their arguments parsed; the others are answered at once (see `admit`)."""
        admitted, refused = self._ledger.admit_all(requests)
        for request_id, method, why in refused:
            self.ready(request_id, PendingRequest(method, reply=refusal_reply(request_id, why)))
        return admitted

    def ready(self, request_id: str, pending: PendingRequest) -> None:
        """Record a request whose reply is ready."""
        self._add(request_id, pending)
        self._completed.append(request_id)

    def park_yield(self, request_id: str, args: list[Any]) -> None:
        """Record a `yield`: it parks the cell until the next `wait`."""
        self._add(request_id, PendingRequest("yield", args, reason=args[0] if args else None))

    def _add(self, request_id: str, pending: PendingRequest) -> None:
        if request_id in self._items:  # a replaced entry (never expected): the count stays exact
            self._forget(request_id)
        self._items[request_id] = pending
        if pending.method == "yield":
            self.yields += 1

    def _forget(self, request_id: str) -> PendingRequest | None:
        pending = self._items.pop(request_id, None)
        if pending is not None and pending.method == "yield":
            self.yields -= 1
        return pending

    def start(
        self,
        request_id: str,
        method: str,
        args: list[Any],
        work: Coroutine[Any, Any, Reply],
        *,
        eager: bool = False,
    ) -> None:
        """Run `work` as the host task of a request; `eager`: its first step taken now
        (`_call_task`: a tool that never suspends is done on return), else in a later loop
        turn. Nobody hears when it settles until `watch` is called: a task that settles
        before then is found by `sweep`."""
        task = start_call(work) if eager else asyncio.get_running_loop().create_task(work)
        self.running += 1
        if method == "yield" or request_id in self._items:  # never expected: `_add` counts
            self._add(request_id, PendingRequest(method, args, task=task))
        else:  # `_add`, inline (every call)
            self._items[request_id] = PendingRequest(method, args, task=task)
        self._unwatched.append((request_id, task))

    def watch(self, on_done: Settled) -> None:
        """Have `on_done` hear when each task started since the last `watch` settles.

        Most tool calls settle in the loop turn after their task starts, where `sweep`
        records them: a done-callback for each would be one more loop callback per call,
        and a loop with callbacks ready makes a guest-thread hand-off take its slow path
        (see `runtime._worker`). So a cell attaches them only before it waits for a task
        or ends its leg with tasks still running. A task that settled meanwhile is told
        at once (by the loop, as asyncio runs the callbacks of a done future)."""
        unwatched = self._unwatched
        if not unwatched:
            return
        for request_id, task in unwatched:
            pending = self._items.get(request_id)
            if pending is not None and pending.task is task and pending.reply is None:
                task.add_done_callback(functools.partial(self._task_done, request_id, on_done))
        unwatched.clear()

    def _task_done(self, request_id: str, on_done: Settled, _task: object) -> None:
        self._done(request_id, on_done)

    def _done(self, request_id: str, on_done: Settled) -> None:
        pending = self._items.get(request_id)
        if pending is None or pending.task is None or pending.reply:
            return  # cancelled by the cell (no longer pending) or already recorded
        self.running -= 1
        self._completed.append(request_id)
        pending.reply = _task_reply(request_id, pending.task)
        on_done(request_id, pending)

    def sweep(self, on_swept: Settled | None) -> None:
        """Record tasks that finished but whose done-callbacks have not run yet, and tell
        `on_swept` (if any) of each. (A request is put in `_completed` only with its reply:
        one with a reply is recorded already.)"""
        completed = self._completed
        for request_id, pending in self._items.items():
            task = pending.task
            if task is None or pending.reply:
                continue
            state = _state(task)
            if state == "PENDING":
                continue
            self.running -= 1
            completed.append(request_id)
            if state == "FINISHED" and _exception(task) is None:  # `_task_reply`, inline
                pending.reply = _result(task)
            else:
                pending.reply = _task_reply(request_id, task)
            if on_swept is not None:
                on_swept(request_id, pending)

    def settled_now(
        self, on_swept: Settled | None, on_done: Settled, turn_due: float
    ) -> list[Reply] | None:
        """What the cell's wait for settlements hands back when it would neither wait for a
        task nor give the loop a turn (one is due at `turn_due`, a `time.monotonic()`): every
        reply (the answered `yield`s first); `None` when the cell must wait. Tasks found
        done are told to `on_swept`; `on_done` hears when those still running settle."""
        yields = self.answered_yields() if self.yields else []
        if self.running and not yields:
            if time.monotonic() >= turn_due:
                return None
            self.sweep(on_swept)
            if self.running:
                return None
        if self.running:  # (with none running, no task needs its done-callback)
            self.watch(on_done)
        return self.take(yields)

    def take(self, first: list[str]) -> list[Reply]:
        """The replies of `first`, then every completed one in completion order."""
        replies: list[Reply] = []
        for request_id in first:
            taken = self._forget(request_id)
            reply = taken.reply if taken is not None else None
            assert reply is not None
            replies.append(reply)
        completed, items = self._completed, self._items
        released = [*first, *completed]
        while completed:
            request_id = completed.popleft()
            pending = items.pop(request_id, None)  # `_forget`, inline (every call)
            if pending is None:
                continue
            if pending.method == "yield":
                self.yields -= 1
            if pending.reply is not None:
                replies.append(pending.reply)
            elif pending.task is not None:
                replies.append(_task_reply(request_id, pending.task))
        self._ledger.release_many(released)
        if not self.running:  # every task settled and was recorded: none needs a callback
            self._unwatched.clear()
        return replies

    def withdraw(self, request_id: str) -> None:
        """The guest cancelled a request: forget it and cancel its task."""
        self._ledger.release(request_id)
        pending = self._forget(request_id)
        if pending is not None and pending.task is not None:
            if pending.reply is None:  # not recorded yet, done or not: nothing else will
                self.running -= 1  # (its done-callback and `sweep` skip what is forgotten)
            pending.task.cancel()

    def cancel(self) -> None:
        """Cancel every host task and forget every request."""
        for pending in self._items.values():
            if pending.task is not None:
                pending.task.cancel()
        self._items.clear()
        self._completed.clear()
        self._unwatched.clear()
        self.running = 0
        self.yields = 0
        self._ledger.release_all()

    # -- the saved state of a parked cell -------------------------------------------------

    def state(self) -> list[dict[str, Any]]:
        """Every pending request as JSON-shaped data (running ones without a reply)."""
        saved: list[dict[str, Any]] = []
        for request_id, item in self._items.items():
            entry: dict[str, Any] = {"id": request_id, "method": item.method, "args": item.args}
            reply = item.reply
            if reply is None and item.task is not None and item.task.done():
                reply = _task_reply(request_id, item.task)
            if reply is not None:
                entry["reply"] = {"ok": reply.ok, "payload": reply.payload}
            saved.append(entry)
        return saved

    def revive(
        self,
        entry: dict[str, Any],
        *,
        replay_safe: bool,
        run: Callable[[str, str, list[Any]], None],
    ) -> None:
        """Restore one saved request; `run` dispatches it again when `replay_safe`.

        A request that may not run again rejects into the guest with `RESTART_MESSAGE`
        (`effectStatus: "unknown"`), so nothing runs twice silently.
        """
        request_id, method, args = str(entry["id"]), str(entry["method"]), list(entry["args"])
        reply = cast(dict[str, Any] | None, entry.get("reply"))
        if reply is not None:
            saved = Reply(id=request_id, ok=bool(reply["ok"]), payload=str(reply["payload"]))
            self.ready(request_id, PendingRequest(method, args, reply=saved))
        elif method == "yield":
            self.park_yield(request_id, args)
        elif replay_safe:
            run(request_id, method, args)
        else:
            payload = json.dumps({"message": RESTART_MESSAGE, "code": "tool_error"})
            failed = Reply(id=request_id, ok=False, payload=payload)
            self.ready(request_id, PendingRequest(method, args, reply=failed))


# asyncio's own fields of a future (the C and the Python task alike: `"PENDING"`,
# `"FINISHED"` or `"CANCELLED"`, its result and exception), read without `done()`'s and
# `result()`'s calls: a cell reads them for every call, and on 3.11 a call's task is the
# Python one (`_call_task`), whose methods are Python functions.
_state = operator.attrgetter("_state")
_result = operator.attrgetter("_result")
_exception = operator.attrgetter("_exception")


def parks_at_once(requests: list[tuple[str, str, list[Any]]]) -> bool:
    """Whether admitted `requests` hold a `yield` (which parks the cell at once)."""
    if len(requests) == 1:  # a sequential call's turn
        return requests[0][1] == "yield"
    return "yield" in [request[1] for request in requests]


def _task_reply(request_id: str, task: asyncio.Task[Reply]) -> Reply:
    """A finished task's reply; one that ended cancelled although the cell did not cancel
    it (a tool cancelled its own task) is a tool failure (D7)."""
    if _state(task) == "FINISHED" and _exception(task) is None:
        return _result(task)  # `result()`, read without a call (a sweep reads every reply)
    return cancelled_reply(request_id) if task.cancelled() else task.result()


def _yielded(request_id: str, reason: Any) -> Reply:
    """What a parked `yield` resolves to: the text `json.dumps` writes, spelled out for the
    usual reasons (a string, or none) rather than built by the encoder on every `wait`."""
    if isinstance(reason, str):
        payload = '{"status": "yielded", "reason": ' + encode_basestring_ascii(reason) + "}"
    elif reason is None:
        payload = '{"status": "yielded", "reason": null}'
    else:
        payload = json.dumps({"status": "yielded", "reason": reason})
    return Reply(id=request_id, ok=True, payload=payload)
