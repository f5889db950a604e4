"""The playground's run history: each session's recent `exec`/`wait` calls, newest first.

The history lives in the server's memory (bounded per session and in sessions), so a reload
shows the runs again with their envelopes; a run parked on approvals shows a live card for
each approval still pending and, for the others, who decided (or that it expired) and when,
read from the session's approval audit trail.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

from ..approvals import ApprovalDecision
from ._protocol import CellRunner

__all__ = ["ApprovingRunner", "PlayHistory", "PlayRun", "RunView", "waiting_approvals"]

MAX_RUNS: Final = 50
"""Runs each session's history keeps (older ones drop off)."""
MAX_SESSIONS: Final = 100
"""Sessions whose history is kept (the least recently used drops off)."""


@runtime_checkable
class ApprovingRunner(CellRunner, Protocol):
    """A `CellRunner` that also decides and expires approvals (`clawcell.CodeMode` fits)."""

    async def decide(
        self,
        run_id: str,
        approval_id: str,
        decision: Literal["approve", "deny"],
        *,
        note: str = "",
        remember: bool = False,
        by: str = "",
    ) -> ApprovalDecision:
        """Record a decision on a pending approval."""
        ...

    async def expire_approvals(
        self, run_ids: Sequence[str] = (), *, reason: str = "superseded"
    ) -> list[ApprovalDecision]:
        """Expire the undecided approvals of `run_ids` (and of runs parked in-process)."""
        ...

    async def approval_audit(self) -> list[ApprovalDecision]:
        """Every decision recorded in the session."""
        ...


@dataclass(frozen=True, kw_only=True)
class PlayRun:
    """One playground call: its card id, what ran, and its envelope once it ended."""

    id: str
    tool: str
    code: str | None
    run_id: str | None
    """For `wait`: the run it continues."""
    started_at: float = field(default_factory=time.monotonic)
    envelope: Mapping[str, Any] | None = None
    seconds: float | None = None


@dataclass(frozen=True, kw_only=True)
class RunView:
    """A run as the history draws it: the run, and each approval it asked for with its
    decision (`None` while pending)."""

    run: PlayRun
    approvals: tuple[tuple[Mapping[str, Any], Mapping[str, Any] | None], ...] = ()


def waiting_approvals(envelope: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The `pendingApprovals` of an envelope parked on approvals (else none)."""
    if envelope is None or envelope.get("status") != "waiting":
        return []
    if envelope.get("reason") != "approval" or not isinstance(envelope.get("runId"), str):
        return []
    prompts: object = envelope.get("pendingApprovals")
    if not isinstance(prompts, list):
        return []
    return [p for p in prompts if isinstance(p, Mapping)]  # pyright: ignore[reportUnknownVariableType]


class PlayHistory:
    """Recent playground runs of every session."""

    def __init__(self, max_runs: int = MAX_RUNS, max_sessions: int = MAX_SESSIONS) -> None:
        self._max_runs, self._max_sessions = max_runs, max_sessions
        self._sessions: OrderedDict[str, deque[PlayRun]] = OrderedDict()

    def _runs(self, session_id: str) -> deque[PlayRun]:
        runs = self._sessions.setdefault(session_id, deque(maxlen=self._max_runs))
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > self._max_sessions:
            self._sessions.popitem(last=False)
        return runs

    def started(self, session_id: str, run: PlayRun) -> None:
        """Record a run that just started."""
        self._runs(session_id).append(run)

    def finished(self, session_id: str, card: str, envelope: Mapping[str, Any]) -> PlayRun | None:
        """Record a run's envelope; the updated run (`None` if it dropped off meanwhile)."""
        runs = self._runs(session_id)
        for index, run in enumerate(runs):
            if run.id == card:
                seconds = time.monotonic() - run.started_at
                runs[index] = dataclasses.replace(run, envelope=envelope, seconds=seconds)
                return runs[index]
        return None

    def parked_run_ids(self, session_id: str) -> list[str]:
        """The runs of the session's history that parked on approvals."""
        runs = self._sessions.get(session_id, ())
        return [
            str(r.envelope.get("runId"))
            for r in runs
            if r.envelope is not None and waiting_approvals(r.envelope)
        ]

    async def view_of(self, session_id: str, run_id: str, runner: CellRunner) -> RunView | None:
        """The newest run of the session that parked `run_id` on approvals, as drawn now."""
        for run in reversed(self._sessions.get(session_id, ())):
            envelope = run.envelope
            if (
                envelope is not None
                and envelope.get("runId") == run_id
                and waiting_approvals(envelope)
            ):
                return RunView(run=run, approvals=_decided(run, await _audit(runner)))
        return None

    async def views(self, session_id: str, runner: CellRunner) -> list[RunView]:
        """The session's runs, newest first, with each approval's decision when decided."""
        runs = list(reversed(self._sessions.get(session_id, ())))
        if not any(waiting_approvals(r.envelope) for r in runs):
            return [RunView(run=r) for r in runs]
        audit = await _audit(runner)
        return [RunView(run=r, approvals=_decided(r, audit)) for r in runs]


async def _audit(runner: CellRunner) -> dict[str, Mapping[str, Any]]:
    """Each decision of the session (expiries included) by approval id."""
    if not isinstance(runner, ApprovingRunner):
        return {}
    return {d.approval_id: d.to_json() for d in await runner.approval_audit()}


def _decided(
    run: PlayRun, audit: Mapping[str, Mapping[str, Any]]
) -> tuple[tuple[Mapping[str, Any], Mapping[str, Any] | None], ...]:
    return tuple((p, audit.get(str(p.get("id")))) for p in waiting_approvals(run.envelope))
