"""Approval prompts: what a decision request must carry, and the prompts history shows again.

A turn whose cell waits only for approvals ends with `turn_finished` in state
`waiting_approval`; the page shows one card per pending approval, and a decision is a POST
that `Agent.decide` answers with the continued turn. A person who reloads the page still gets
the cards: the session's last cells that parked on approvals are asked for what is still
pending (`CodeMode.pending_approvals`), which reads the parked run from the store.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from ..approvals import ApprovalDecision
from ..approvals import Decision as Verdict
from ._protocol import AgentEvent, ApprovingRunner, CellRunner, ChatAgent, SharedTurnsAgent
from ._render._views import CellView, MessageView
from ._responses import RUN_OR_APPROVAL_ID, bad_request, json_body

__all__ = [
    "DECIDED_BY",
    "MAX_NOTE_CHARS",
    "Decision",
    "decided",
    "decided_by",
    "read_decision",
    "with_pending",
]

MAX_NOTE_CHARS: Final = 2_000
DECIDED_BY: Final = "control-ui"
"""What the audit trail records as `by` for decisions made in the UI."""


@dataclass(frozen=True, kw_only=True)
class Decision:
    """A person's decision on one pending approval, as every card posts it (chat, playground,
    MCP App): the route names the run and the approval, the body is `{"decision": "approve" |
    "deny", "note"?: str, "remember"?: bool}` (`static/stream.js` `postDecision`).

    Its fields are what `CodeMode.decide` and `Agent.decide` take; `by` is who decided, as
    the audit trail records it (the route says which part of the UI)."""

    run_id: str
    approval_id: str
    decision: Verdict
    note: str = ""
    remember: bool = False
    by: str = DECIDED_BY


async def read_decision(request: Request, *, by: str = DECIDED_BY) -> Decision | Response:
    """The decision a request posts to `…/{run}/approvals/{approval}`, or the `400` saying
    what is wrong with it (checked before any agent or runner is asked)."""
    run_id, approval_id = request.path_params["run"], request.path_params["approval"]
    for name, value in (("run", run_id), ("approval", approval_id)):
        if not RUN_OR_APPROVAL_ID.fullmatch(value):
            return bad_request(f"{name} id {value!r:.80} is not allowed.")
    body = await json_body(request)
    problem = _problem(body)
    if body is None or problem is not None:
        return bad_request(problem or _NOT_AN_OBJECT)
    remember = body.get("remember")
    return Decision(
        run_id=run_id,
        approval_id=approval_id,
        decision="approve" if body["decision"] == "approve" else "deny",
        note=body.get("note", ""),
        remember=bool(remember),
        by=by,
    )


async def decided_by(runner: ApprovingRunner, decision: Decision) -> ApprovalDecision:
    """Record `decision` with a session's Code Mode (the playground, an MCP App's call)."""
    return await runner.decide(
        decision.run_id,
        decision.approval_id,
        decision.decision,
        note=decision.note,
        remember=decision.remember,
        by=decision.by,
    )


def decided(
    agent: ChatAgent, session_id: str, decision: Decision, *, stop: asyncio.Event
) -> AsyncIterator[AgentEvent]:
    """Record `decision` through the agent: `approval_decided`, then the continued turn's
    events. `stop` reaches an agent that hears Stops from other workers (`SharedTurnsAgent`);
    a double without it is stopped in-process only."""
    ids = (session_id, decision.run_id, decision.approval_id, decision.decision)
    note, remember, by = decision.note, decision.remember, decision.by
    if isinstance(agent, SharedTurnsAgent):
        return agent.decide(*ids, note=note, remember=remember, by=by, stop=stop)
    return agent.decide(*ids, note=note, remember=remember, by=by)


_NOT_AN_OBJECT: Final = 'the body must be a JSON object `{"decision": "approve" | "deny", …}`.'


def _problem(body: Mapping[str, Any] | None) -> str | None:
    """What is wrong with a decision's body (`None`: nothing)."""
    if body is None:
        return _NOT_AN_OBJECT
    decision, note, remember = body.get("decision"), body.get("note", ""), body.get("remember")
    if decision not in ("approve", "deny"):
        return f"`decision` must be 'approve' or 'deny', got {decision!r:.80}."
    if not isinstance(note, str):
        return f"`note` must be a string, got {note!r:.80}."
    if len(note) > MAX_NOTE_CHARS:
        return f"`note` has {len(note)} characters; shorten it to at most {MAX_NOTE_CHARS}."
    if remember is not None and not isinstance(remember, bool):
        return f"`remember` must be true or false, got {remember!r:.80}."
    return None


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
