"""Where decisions and the audit trail live: the session store, out of every cell's reach.

Decisions are entries of a derived session id (`<session>\\x1fapprovals`) and the audit trail
of another (`<session>\\x1faudit`). A cell's `store`/`load` only ever address its own session
id, so no cell can read or forge a decision, whatever key it uses; any backend
(`MemoryStore`, `SQLiteStore`, PostgreSQL) keeps them, so a decision made by another process
(the UI) is seen by the worker that continues the run. Session ids may not contain control
characters, so no session id is another one's derived id.

Of two decisions on one approval exactly one is accepted, on every backend and across
processes: the decision is written with the store's `put_new` (insert unless present), one
atomic statement. Each decision is sealed with the session's state key (`store/_seals.py`):
one that a database writer forged or moved from another session or approval fails its check,
is logged on the `clawcell.audit` logger, deleted, and counts as no decision.

A decision a person asked to remember for the session is also kept under the tool's name
(`remember:<tool>`, the same sealed text), so every worker of the session finds it with one
read; the latest such decision for a tool wins.

Per approval id the ledger holds the decision and, once the approved call has been handed to
its tool, a *dispatched* mark written before the tool runs: a worker that is killed after the
mark never runs the call again (it counts as interrupted, `effectStatus: "unknown"`), and one
killed before it runs the call exactly once after the restart.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any, Final

from .._session_ids import check_session_id
from ..store import FirstWriter, SessionStore, StateKeys, StoredValue, state_keys_for
from ._types import ApprovalDecision, Decision, Remember

__all__ = ["DecisionLedger"]

_DECISIONS: Final = "\x1fapprovals"
_AUDIT: Final = "\x1faudit"
_DISPATCHED: Final = ":dispatched"
_REMEMBER: Final = "remember:"
_SEAL: Final = "seal"
_audit_log = logging.getLogger("clawcell.audit")


class DecisionLedger:
    """Decisions, dispatch marks and the audit trail of one session.

    `keys` seal the decisions; by default the store's keys (`state_keys_for`), the ones every
    `CodeMode` on that store uses. They are resolved when a decision is first sealed or read
    (a function of no arguments may stand for them), so a session that never decides anything
    creates no development key file.

    Raises:
        ConfigurationError: a session id with control characters.
    """

    def __init__(
        self,
        store: SessionStore,
        session_id: str,
        keys: StateKeys | Callable[[], StateKeys] | None = None,
    ) -> None:
        self._store = store
        self._session_id = check_session_id(session_id)
        self._decisions = session_id + _DECISIONS
        self._audit = session_id + _AUDIT
        self._key_source = keys
        self._resolved_keys: StateKeys | None = None
        self._lock = asyncio.Lock()

    @property
    def _keys(self) -> StateKeys:
        if self._resolved_keys is None:
            source = self._key_source
            if isinstance(source, StateKeys):
                self._resolved_keys = source
            elif source is not None:
                self._resolved_keys = source()
            else:
                self._resolved_keys = state_keys_for(self._store, durable=True)
        return self._resolved_keys

    async def record(self, decision: ApprovalDecision) -> bool:
        """Keep a decision and audit it; `False` (nothing written) when one exists already.

        Atomic: of concurrent calls for one approval (any task or process), one gets `True`.
        """
        text = self._sealed(decision)
        value = StoredValue(json=text)
        if not await self._put_first(decision.approval_id, value):
            return False
        key = f"{decision.decided_at:020.6f}:{decision.approval_id}"
        await self._store.put(self._audit, key, value)
        if decision.remember == "session":
            await self._store.put(self._decisions, _REMEMBER + decision.tool, value)
        return True

    async def remembered(self, tool: str) -> Decision | None:
        """The decision remembered for `tool` for the rest of the session, by any worker."""
        stored = await self._store.get(self._decisions, _REMEMBER + tool)
        decision = None if stored is None else self._opened(stored.json, None)
        if decision is None or decision.tool != tool or decision.remember != "session":
            return None
        return decision.decision

    async def _put_first(self, approval_id: str, value: StoredValue) -> bool:
        store = self._store
        if isinstance(store, FirstWriter):
            return await store.put_new(self._decisions, approval_id, value)
        async with self._lock:  # a store without `put_new`: atomic within this process only
            if await store.get(self._decisions, approval_id) is not None:
                return False
            await store.put(self._decisions, approval_id, value)
            return True

    async def decision(self, approval_id: str) -> ApprovalDecision | None:
        """The recorded decision of an approval, or `None` (also for a forged one, which is
        deleted and logged)."""
        stored = await self._store.get(self._decisions, approval_id)
        if stored is None:
            return None
        decision = self._opened(stored.json, approval_id)
        if decision is None:
            _audit_log.warning(
                "discarded a decision on approval %r of session %r that fails its state-key "
                "check (forged, moved or damaged)",
                approval_id,
                self._session_id,
            )
            await self._store.delete(self._decisions, approval_id)
        return decision

    async def mark_dispatched(self, approval_id: str) -> None:
        await self._store.put(self._decisions, approval_id + _DISPATCHED, StoredValue(json="1"))

    async def dispatched(self, approval_id: str) -> bool:
        return await self._store.get(self._decisions, approval_id + _DISPATCHED) is not None

    async def audit(self) -> list[ApprovalDecision]:
        """Every decision of the session, oldest first (entries failing their check left out)."""
        items = await self._store.items(self._audit)
        opened = (self._opened(items[key].json, None) for key in sorted(items))
        return [decision for decision in opened if decision is not None]

    def _sealed(self, decision: ApprovalDecision) -> str:
        data = decision.to_json()
        seal = self._keys.seal(*self._parts(decision.approval_id, data))
        return json.dumps({**data, _SEAL: seal}, separators=(",", ":"))

    def _parts(
        self, approval_id: str, data: dict[str, Any]
    ) -> tuple[str, str, str, dict[str, Any]]:
        return ("decision", self._session_id, approval_id, data)

    def _opened(self, text: str, approval_id: str | None) -> ApprovalDecision | None:
        """The decision in `text` when its seal holds (for `approval_id`, when given)."""
        try:
            data: Any = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        fields: dict[str, Any] = dict(data)  # pyright: ignore[reportUnknownArgumentType]
        seal = fields.pop(_SEAL, None)
        claimed = fields.get("approvalId")
        if not isinstance(claimed, str) or approval_id not in (None, claimed):
            return None
        if not self._keys.verify(seal, *self._parts(claimed, fields)):
            return None
        try:
            return _decision(fields)
        except (KeyError, TypeError, ValueError):
            return None


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
