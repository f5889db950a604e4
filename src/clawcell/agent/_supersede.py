"""A new user message supersedes the approvals the session's last turn was waiting on.

Once a person has moved on ("never mind"), an old approval card must not be able to run its
tool. When a user message starts a turn, every approval still undecided on a run the
session's previous turn parked (read from the transcript, so also runs parked by another
process) or on a run parked in this process is expired with reason `superseded`: the audit
trail records it, deciding it later is refused, and the parked call rejects with
`approval_denied` if the run is ever continued.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .. import CodeMode
from ..store import transcript_text
from ._events import ApprovalDecided

__all__ = ["supersede_approvals"]

_CELL_TOOLS = frozenset({"exec", "wait"})


def parked_on_approval(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The run ids of cells that parked on approvals since the last user message."""
    runs: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") != "toolResult" or message.get("toolName") not in _CELL_TOOLS:
            continue
        run_id = _waiting_run(message)
        if run_id is not None:
            runs.append(run_id)
    return runs[::-1]


def _waiting_run(message: Mapping[str, Any]) -> str | None:
    text = transcript_text(message)
    if '"approval"' not in text:
        return None
    try:
        envelope: object = json.loads(text)
    except ValueError:
        return None
    if not isinstance(envelope, Mapping):
        return None
    fields = cast(Mapping[str, Any], envelope)
    waiting = fields.get("status") == "waiting" and fields.get("reason") == "approval"
    run_id = fields.get("runId")
    return run_id if waiting and isinstance(run_id, str) else None


async def supersede_approvals(
    mode: CodeMode, session_id: str, messages: Sequence[Mapping[str, Any]]
) -> list[ApprovalDecided]:
    """Expire what the session waited on before this message; one event per expiry."""
    expired = await mode.expire_approvals(parked_on_approval(messages), reason="superseded")
    return [ApprovalDecided.of(session_id, record) for record in expired]
