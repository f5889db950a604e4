"""The activity log of MCP App tool calls: one stored row per call, in the call's session.

Every `tools/call` a view makes is recorded before it runs and updated when it ends: the app
(its MCP server and view), the tool, the arguments, what triggered it (`gesture`: the page saw
a user gesture in the view; `approved`: the user allowed a call that came without one; `none`:
neither, so the call was refused and never ran), the status (`running`, `waiting` for an
approval, `completed`, `failed`, `refused`) and a bounded result.

Rows live in the agent's store (its `ResultStore`, scope `ui:app-activity:<session>`, one
result id per row, named by time), not in one process's memory: every worker of one database
sees and updates the same rows, and no row is read, changed and written back as a list, so
two workers never lose each other's rows. The page reads a view's rows (newest
`MAX_ROWS_SHOWN`) with the view's data, and the approvals its `waiting` rows still hold, so a
pending approval card comes back after a reload.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import Any, Final, Literal, cast

from ...store import ResultStore

__all__ = ["MAX_ROWS_SHOWN", "TRIGGERS", "ActivityLog", "Trigger"]

Trigger = Literal["gesture", "approved", "none"]
TRIGGERS: Final[frozenset[str]] = frozenset({"gesture", "approved", "none"})
MAX_ROWS_SHOWN: Final = 20
_MAX_RESULT_CHARS: Final = 4000


def _scope(session: str) -> str:
    return f"ui:app-activity:{session}"


def _bounded(value: object) -> object:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= _MAX_RESULT_CHARS else text[:_MAX_RESULT_CHARS] + "…"


class ActivityLog:
    """Records and reads the rows (nothing is recorded without a `ResultStore`)."""

    def __init__(self, store: object) -> None:
        self.store = store if isinstance(store, ResultStore) else None

    async def start(
        self, session: str, *, call: Mapping[str, Any], view: str, tool: str,
        arguments: Mapping[str, Any], trigger: Trigger,
    ) -> str:  # fmt: skip
        """Record a call about to run; the row's id."""
        at = int(time.time() * 1000)
        row_id = f"{at:015d}-{secrets.token_hex(4)}"
        status = "refused" if trigger == "none" else "running"
        row = {"id": row_id, "at": at, "app": call.get("serverName"), "view": view,
               "tool": tool, "arguments": _bounded(dict(arguments)), "trigger": trigger,
               "status": status}  # fmt: skip
        await self._put(session, row)
        return row_id

    async def finish(self, session: str, row_id: str, **fields: Any) -> None:
        """Update a row with the call's outcome (`status`, `result`, `error`, `runId`)."""
        row = await self._get(session, row_id)
        if row is None:
            return
        if "result" in fields:
            fields["result"] = _bounded(fields["result"])
        await self._put(session, {**row, **fields})

    async def waiting_row(self, session: str, run_id: str) -> str | None:
        """The id of the row whose call waits in run `run_id`."""
        for row in await self.rows(session):
            if row.get("runId") == run_id and row.get("status") == "waiting":
                return str(row["id"])
        return None

    async def rows(self, session: str, view: str | None = None) -> list[dict[str, Any]]:
        """The session's rows (of `view` when given), oldest first."""
        if self.store is None:
            return []
        found: list[dict[str, Any]] = []
        for row_id in await self.store.list_results(_scope(session)):
            row = await self._get(session, row_id)
            if row is not None and (view is None or row.get("view") == view):
                found.append(row)
        return found

    async def _get(self, session: str, row_id: str) -> dict[str, Any] | None:
        if self.store is None:
            return None
        text = await self.store.get_result(_scope(session), row_id)
        try:
            row: object = json.loads(text) if text else None
        except ValueError:
            return None
        return cast(dict[str, Any], row) if isinstance(row, dict) else None

    async def _put(self, session: str, row: Mapping[str, Any]) -> None:
        if self.store is not None:
            text = json.dumps(row, ensure_ascii=False, default=str)
            await self.store.put_result(_scope(session), str(row["id"]), text)
