"""Where decisions and the audit trail live: the session store, out of every cell's reach.

Decisions are entries of a derived session id (`<session>\\x1fapprovals`) and the audit trail
of another (`<session>\\x1faudit`). A cell's `store`/`load` only ever address its own session
id, so no cell can read or forge a decision, whatever key it uses; any backend
(`MemoryStore`, `SQLiteStore`, PostgreSQL) keeps them, so a decision made by another process
(the UI) is seen by the worker that continues the run.

Per approval id the ledger holds the decision and, once the approved call has been handed to
its tool, a *dispatched* mark written before the tool runs: a worker that is killed after the
mark never runs the call again (it counts as interrupted, `effectStatus: "unknown"`), and one
killed before it runs the call exactly once after the restart.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..store import SessionStore, StoredValue
from ._types import ApprovalDecision, Decision, Remember

__all__ = ["DecisionLedger"]

_DECISIONS: Final = "\x1fapprovals"
_AUDIT: Final = "\x1faudit"
_DISPATCHED: Final = ":dispatched"


class DecisionLedger:
    """Decisions, dispatch marks and the audit trail of one session."""

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self._store = store
        self._decisions = session_id + _DECISIONS
        self._audit = session_id + _AUDIT

    async def record(self, decision: ApprovalDecision) -> bool:
        """Keep a decision and audit it; `False` (nothing written) when one exists already."""
        if await self._store.get(self._decisions, decision.approval_id) is not None:
            return False
        text = json.dumps(decision.to_json(), separators=(",", ":"))
        await self._store.put(self._decisions, decision.approval_id, StoredValue(json=text))
        key = f"{decision.decided_at:020.6f}:{decision.approval_id}"
        await self._store.put(self._audit, key, StoredValue(json=text))
        return True

    async def decision(self, approval_id: str) -> ApprovalDecision | None:
        """The recorded decision of an approval, or `None`."""
        stored = await self._store.get(self._decisions, approval_id)
        return None if stored is None else _decision(json.loads(stored.json))

    async def mark_dispatched(self, approval_id: str) -> None:
        await self._store.put(self._decisions, approval_id + _DISPATCHED, StoredValue(json="1"))

    async def dispatched(self, approval_id: str) -> bool:
        return await self._store.get(self._decisions, approval_id + _DISPATCHED) is not None

    async def audit(self) -> list[ApprovalDecision]:
        """Every decision of the session, oldest first."""
        items = await self._store.items(self._audit)
        return [_decision(json.loads(items[key].json)) for key in sorted(items)]


def _decision(data: dict[str, Any]) -> ApprovalDecision:
    from datetime import datetime

    decided: Decision = "approve" if data.get("decision") == "approve" else "deny"
    remember: Remember = "session" if data.get("remember") == "session" else "once"
    return ApprovalDecision(
        approval_id=str(data["approvalId"]),
        run_id=str(data.get("runId", "")),
        tool=str(data.get("tool", "")),
        decision=decided,
        note=str(data.get("note", "")),
        remember=remember,
        by=str(data.get("by", "")),
        decided_at=datetime.fromisoformat(str(data["decidedAt"])).timestamp(),
        reason=str(data.get("reason", "")),
    )
