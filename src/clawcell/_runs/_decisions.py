"""Decisions on pending approvals: find what a run waits for, record what a person decided.

A run's pending approvals are on its live gate while it is parked in this process, or in its
durable record (`ParkedRecord.approvals`) when it was parked by another process or before a
restart; either way the decision goes to the session's ledger and is delivered at the run's next
leg (`approvals/_gate.py`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..approvals import ApprovalDecision, Approvals, PendingApproval
from ..errors import InputError, SnapshotError
from ._parked import ParkedRecord, RunHome

if TYPE_CHECKING:
    from ..approvals import ApprovalAnswer

__all__ = ["ApprovalDesk"]


class ApprovalDesk:
    """Pending approvals and decisions of one session's runs."""

    def __init__(self, approvals: Approvals, home: RunHome) -> None:
        self._approvals = approvals
        self._store = home.store
        self._session_id = home.session_id
        self._durable = home.durable
        self._home = home

    async def decide(self, answer: ApprovalAnswer) -> ApprovalDecision:
        """Record a person's answer on a pending approval of a run (live or durable); the
        answer checked its own fields when it was made.

        Raises:
            InputError: an approval that is not pending (unknown, decided already, or
                expired).
        """
        run_id, approval_id = answer.run_id, answer.approval_id
        asked, run_expires_at = await self._asked(run_id)
        approval = next((a for a in asked if a.id == approval_id), None)
        if approval is None:
            raise InputError(
                f"approval {approval_id!r} of run {run_id!r} is not pending; it may have been "
                "decided already, expired, or belong to another run."
            )
        self._check_unexpired(approval, run_expires_at)
        record = ApprovalDecision(
            approval_id=approval_id,
            run_id=run_id,
            tool=approval.tool,
            decision=answer.decision,
            note=answer.note,
            remember="session" if answer.remember else "once",
            by=answer.by,
            decided_at=self._approvals.clock(),
        )
        if not await self._approvals.record(record):
            raise await self._refusal(approval_id)
        return record

    async def _refusal(self, approval_id: str) -> InputError:
        known = await self._approvals.ledger.decision(approval_id)
        if known is not None and known.reason:
            return InputError(
                f"approval {approval_id!r} expired ({known.reason}) before anyone decided; "
                "its call did not run and will not. Ask again to run it."
            )
        return InputError(f"approval {approval_id!r} was already decided.")

    async def expire_pending(
        self, run_ids: Iterable[str], *, reason: str
    ) -> list[ApprovalDecision]:
        """Expire every undecided approval of `run_ids` and of the runs parked in this
        process: each is recorded as denied `by="expiry"` with `reason`, so a later decision
        is refused and the call never runs."""
        expired: list[ApprovalDecision] = []
        for run_id in dict.fromkeys([*run_ids, *self._approvals.live_run_ids()]):
            for approval in await self.pending_approvals(run_id):
                record = ApprovalDecision(
                    approval_id=approval.id,
                    run_id=run_id,
                    tool=approval.tool,
                    decision="deny",
                    note=f"the approval expired ({reason}) before anyone decided",
                    by="expiry",
                    decided_at=self._approvals.clock(),
                    reason=reason,
                )
                if await self._approvals.record(record):
                    expired.append(record)
        return expired

    async def pending_approvals(self, run_id: str) -> list[PendingApproval]:
        """The approvals of a run nobody has decided yet (live gate or durable record)."""
        ledger = self._approvals.ledger
        asked, _ = await self._asked(run_id)
        return [a for a in asked if await ledger.decision(a.id) is None]

    def _check_unexpired(self, approval: PendingApproval, run_expires_at: float | None) -> None:
        """Refuse a decision after the approval's TTL or its run's expiry.

        Raises:
            InputError: naming which one ran out.
        """
        ttl = self._approvals.ttl_seconds
        if self._approvals.clock() - approval.requested_at >= ttl:
            raise InputError(
                f"approval {approval.id!r} of run {approval.run_id!r} expired "
                f"(`approval_ttl_seconds` is {ttl:g}); it counts as denied and can no longer "
                "be decided."
            )
        if run_expires_at is not None and run_expires_at <= time.time():
            raise InputError(
                f"run {approval.run_id!r} of approval {approval.id!r} has expired; its "
                "approvals can no longer be decided."
            )

    async def _asked(self, run_id: str) -> tuple[list[PendingApproval], float | None]:
        """Every approval a run still waits to have delivered, decided or not, and when the
        run expires (`None`: unknown)."""
        gate = self._approvals.live(run_id)
        if gate is not None:
            return [*gate.pending, *gate.restored.values()], gate.expires_at
        if not self._durable:
            return [], None
        from ._sealed import open_record  # (a durable store's only: in-memory runs stay live)

        try:
            parked = await self._store.load_run(self._session_id, run_id)
            if parked is None:
                return [], None
            record = ParkedRecord.from_state(open_record(self._home.keys, self._session_id, parked))
        except SnapshotError:
            return [], None  # forged or damaged: its next `wait` reports and discards it
        return [dataclasses.replace(a, run_id=run_id) for a in record.approvals], record.expires_at

    async def audit(self) -> list[ApprovalDecision]:
        """Every decision recorded in the session, oldest first."""
        return await self._approvals.ledger.audit()
