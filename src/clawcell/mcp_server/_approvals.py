"""How `clawcell mcp serve` settles the approvals a parked cell waits for.

A cell that can make no progress without a person's decision parks with `reason: "approval"`
and `pendingApprovals`. Rather than hand that to the model (which can only `wait`), the server
decides each approval and continues the cell within the same tool call:

* `elicit` (the default): the user is asked through MCP elicitation (`elicitation/create`, a
  form with `approve` and `note`) when the client declares that capability; otherwise the call
  is refused, as the policy for clients that cannot ask;
* `allow` / `deny`: decided without asking.

Every decision is an `ApprovalAnswer` recorded by `CodeMode.answer`, so it lands in the audit
with `by` naming where it came from (`mcp-elicitation`, `policy:allow`, …). SDK types stay in
`_server.py`; this module sees the client's answers as `ElicitAnswer`s.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from .._lazy import value_class
from ..approvals import ApprovalAnswer

if TYPE_CHECKING:
    from .. import CodeMode

__all__ = [
    "APPROVAL_SCHEMA",
    "MAX_ROUNDS",
    "ApprovalPolicy",
    "Ask",
    "ElicitAnswer",
    "approval_message",
    "resume",
    "settle",
    "waiting_approvals",
]

ApprovalPolicy = Literal["elicit", "allow", "deny"]
"""`elicit`: ask the user through the client when it can, refuse otherwise; `allow` / `deny`:
decide without asking."""

MAX_ROUNDS: Final = 16
"""Approval rounds settled within one tool call; a cell still asking after that is returned
to the model as `waiting`."""

APPROVAL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Let this tool call run.",
        },
        "note": {
            "type": "string",
            "maxLength": ApprovalAnswer.MAX_NOTE_CHARS,
            "title": "Note",
            "description": "Optional; a denied call reports it to the model.",
        },
    },
    "required": ["approve"],
}
"""The elicitation form: a required `approve` boolean and an optional `note`."""

_REFUSALS: Final = {
    "decline": "the user declined it",
    "cancel": "the user dismissed the request without deciding",
    "denied": "the user denied it",
    "deny": 'the `approvals = "deny"` policy of `clawcell mcp serve` denies every approval',
    "elicit": (
        "the MCP client cannot ask the user (it does not support elicitation), so the call "
        'was refused; `approvals = "allow"` in the server\'s `[policy]` would let it run'
    ),
}
"""Notes of refused calls; the denial message adds the final period."""


@value_class
class ElicitAnswer:
    """What the client answered to one elicitation (`elicitation/create` result)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] = field(default_factory=dict[str, Any])


Ask = Callable[[Mapping[str, Any]], Awaitable[ElicitAnswer]]
"""Asks the user about one `pendingApprovals` entry."""


def waiting_approvals(envelope: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The `pendingApprovals` of an envelope that waits only for decisions, else `[]`."""
    if envelope.get("status") != "waiting" or envelope.get("reason") != "approval":
        return []
    return list(cast(list[dict[str, Any]], envelope.get("pendingApprovals") or []))


def approval_message(approval: Mapping[str, Any]) -> str:
    """The question shown to the user for one pending approval."""
    reason = str(approval.get("reason") or "")
    shown = json.dumps(approval.get("input"), ensure_ascii=False)
    if len(shown) > 2000:
        shown = shown[:2000] + "…"
    head = f"A code mode cell wants to call the tool `{approval.get('tool')}`"
    return f"{head}{f' ({reason})' if reason else ''} with input {shown}. Approve this call?"


def _answer(
    run_id: str, approval_id: str, answer: ElicitAnswer | None, policy: ApprovalPolicy
) -> ApprovalAnswer:
    """What the user (or, unasked, the policy) answered about one approval."""
    answered = functools.partial(ApprovalAnswer, run_id=run_id, approval_id=approval_id)
    if answer is None:
        if policy == "allow":
            return answered(decision="approve", by="policy:allow")
        return answered(decision="deny", note=_REFUSALS[policy], by=f"policy:{policy}")
    note = answer.content.get("note")
    # The form caps the note (`maxLength`); a client that ignores it is cut, not refused: the
    # person's decision counts more than the end of their note.
    note = note.strip()[: ApprovalAnswer.MAX_NOTE_CHARS] if isinstance(note, str) else ""
    by = "mcp-elicitation"
    if answer.action != "accept":
        return answered(decision="deny", note=note or _REFUSALS[answer.action], by=by)
    if answer.content.get("approve") is True:
        return answered(decision="approve", note=note, by=by)
    return answered(decision="deny", note=note or _REFUSALS["denied"], by=by)


async def _decide_all(
    mode: CodeMode,
    run_id: str,
    approval_ids: Sequence[str],
    answers: Mapping[str, ElicitAnswer | None],
    policy: ApprovalPolicy,
) -> dict[str, Any]:
    for approval_id in approval_ids:
        await mode.answer(_answer(run_id, approval_id, answers.get(approval_id), policy))
    return await mode.wait(run_id)


async def settle(
    mode: CodeMode, envelope: dict[str, Any], policy: ApprovalPolicy, ask: Ask | None
) -> dict[str, Any]:
    """Decide what `envelope` waits for and continue the cell, for at most `MAX_ROUNDS`.

    `ask` is `None` when the client cannot be asked; `policy` then decides.
    """
    for _ in range(MAX_ROUNDS):
        pending = waiting_approvals(envelope)
        if not pending:
            return envelope
        answers: dict[str, ElicitAnswer | None] = {}
        for approval in pending:
            use_ask = ask is not None and policy == "elicit"
            answers[approval["id"]] = await ask(approval) if ask is not None and use_ask else None
        ids = [a["id"] for a in pending]
        envelope = await _decide_all(mode, str(envelope["runId"]), ids, answers, policy)
    return envelope


async def resume(
    mode: CodeMode,
    run_id: str,
    asked: Sequence[str],
    answers: Mapping[str, ElicitAnswer],
    policy: ApprovalPolicy,
) -> dict[str, Any]:
    """Decide the approvals of a parked run that the client was `asked` about, from the
    answers it sent back, and continue the run.

    An asked approval without an answer counts as dismissed (denied); approvals the client
    was not asked about stay pending.
    """
    pending = [p.id for p in await mode.pending_approvals(run_id) if p.id in asked]
    given = {i: answers.get(i, ElicitAnswer(action="cancel")) for i in pending}
    return await _decide_all(mode, run_id, pending, given, policy)
