"""Approval prompts: what a decision request must carry, and the prompts history shows again.

A turn whose cell waits only for approvals ends with `turn_finished` in state
`waiting_approval`; the page shows one card per pending approval, and a decision is a POST
that `Agent.answer` answers with the continued turn. A person who reloads the page still gets
the cards: the session's last cells that parked on approvals are asked for what is still
pending (`CodeMode.pending_approvals`), which reads the parked run from the store.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from ..approvals import ApprovalAnswer
from ..errors import InputError
from ._protocol import AgentEvent, CellRunner, ChatAgent, SharedTurnsAgent
from ._render._views import CellView, MessageView
from ._responses import bad_request, json_body

__all__ = ["DECIDED_BY", "decided", "read_decision", "with_pending"]

DECIDED_BY: Final = "control-ui"
"""What the audit trail records as `by` for decisions made in the UI."""


async def read_decision(request: Request, *, by: str = DECIDED_BY) -> ApprovalAnswer | Response:
    """The answer a card posts to `…/{run}/approvals/{approval}` (`static/stream.js`
    `postDecision`: `{"decision": "approve" | "deny", "note"?: str, "remember"?: bool}`), or
    the `400` saying what is wrong with it, checked before any agent or runner is asked.

    `by` is who decided, as the audit trail records it (the route says which part of the UI).
    The value checks its own fields (`clawcell.approvals.ApprovalAnswer`), so the UI, the MCP
    server and a program calling `CodeMode.decide` refuse a bad one with the same words.
    """
    body = await json_body(request)
    if body is None:
        return bad_request(_NOT_AN_OBJECT)
    run_id, approval_id = request.path_params["run"], request.path_params["approval"]
    try:
        return ApprovalAnswer.from_json(body, run_id=run_id, approval_id=approval_id, by=by)
    except InputError as exc:
        return bad_request(exc.message)


def decided(
    agent: ChatAgent, session_id: str, answer: ApprovalAnswer, *, stop: asyncio.Event
) -> AsyncIterator[AgentEvent]:
    """Record `answer` through the agent: `approval_decided`, then the continued turn's
    events. `stop` reaches an agent that hears Stops from other workers (`SharedTurnsAgent`);
    a double without it is stopped in-process only."""
    if isinstance(agent, SharedTurnsAgent):
        return agent.answer(session_id, answer, stop=stop)
    return agent.answer(session_id, answer)


_NOT_AN_OBJECT: Final = 'the body must be a JSON object `{"decision": "approve" | "deny", …}`.'


def _parked_on_approval(view: MessageView) -> CellView | None:
    cell = view.items[0] if view.role == "cell" and view.items else None
    if not isinstance(cell, CellView):
        return None
    envelope = cell.envelope
    waiting = envelope.get("status") == "waiting" and envelope.get("reason") == "approval"
    return cell if waiting and isinstance(envelope.get("runId"), str) else None


async def with_pending(
    views: Sequence[MessageView], runner: Callable[[], CellRunner]
) -> list[MessageView]:
    """`views` with the still-pending approvals attached to the trailing parked cells.

    Only the cells after the last message count: a turn that parked on approvals ends right
    after its tool results, so anything later means the session has moved on. `runner` (the
    session's Code Mode) is only asked for when such a cell is there.
    """
    out = [_superseded(view) for view in views]
    index = len(out)
    while index > 0 and out[index - 1].role == "cell":
        index -= 1
        cell = _parked_on_approval(out[index])
        if cell is None:
            continue
        pending = await runner().pending_approvals(str(cell.envelope["runId"]))
        approvals = tuple(dict(p.to_json()) for p in pending)
        fresh = dataclasses.replace(cell, approvals=approvals, expired=False)
        out[index] = dataclasses.replace(out[index], items=(fresh,))
    return out


def _superseded(view: MessageView) -> MessageView:
    """A parked cell not at the end: a later message superseded its approvals."""
    cell = _parked_on_approval(view)
    if cell is None:
        return view
    return dataclasses.replace(view, items=(dataclasses.replace(cell, expired=True),))
