"""Approval prompts: what a decision request must carry, and the prompts history shows again.

A turn whose cell waits only for approvals ends with `turn_finished` in state
`waiting_approval`; the page shows one card per pending approval, and a decision is a POST
that `Agent.decide` answers with the continued turn. A person who reloads the page still gets
the cards: the session's last cells that parked on approvals are asked for what is still
pending (`CodeMode.pending_approvals`), which reads the parked run from the store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._protocol import CellRunner
from ._render._views import CellView, MessageView

__all__ = ["DECIDED_BY", "MAX_NOTE_CHARS", "DecisionBody", "read_decision", "with_pending"]

MAX_NOTE_CHARS: Final = 2_000
DECIDED_BY: Final = "control-ui"
"""What the audit trail records as `by` for decisions made in the UI."""


@dataclass(frozen=True, kw_only=True)
class DecisionBody:
    """A decision as the page posts it: `{"decision", "note"?, "remember"?}`."""

    decision: Literal["approve", "deny"]
    note: str = ""
    remember: bool = False


def read_decision(body: Mapping[str, Any] | None) -> DecisionBody | str:
    """The decision in a request body, or the message saying what is wrong with it."""
    if body is None:
        return 'the body must be a JSON object `{"decision": "approve" | "deny", …}`.'
    decision, note, remember = body.get("decision"), body.get("note", ""), body.get("remember")
    if decision not in ("approve", "deny"):
        return f"`decision` must be 'approve' or 'deny', got {decision!r:.80}."
    if not isinstance(note, str):
        return f"`note` must be a string, got {note!r:.80}."
    if len(note) > MAX_NOTE_CHARS:
        return f"`note` has {len(note)} characters; shorten it to at most {MAX_NOTE_CHARS}."
    if remember is not None and not isinstance(remember, bool):
        return f"`remember` must be true or false, got {remember!r:.80}."
    return DecisionBody(decision=decision, note=note, remember=bool(remember))


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
