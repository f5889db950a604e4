"""A person's answer to one pending approval: the one value every face hands down.

The chat's, the playground's and an MCP App's approval cards (`ui/`), `clawcell mcp serve`'s
elicitation (`mcp_server/`) and a program calling `CodeMode.decide` or `Agent.decide` all
build an `ApprovalAnswer`; what they hand it to (`CodeMode.answer`, `Agent.answer`, the run
desk that records it) takes it whole. It checks itself when it is made, so a bad answer is
refused with the same message whichever face it came through, before any run is looked up.

The three approval values, in the order they happen: `PendingApproval` (what is asked),
`ApprovalAnswer` (what a person answers), `ApprovalDecision` (what the audit trail keeps:
the answer plus the tool, the time, and why an approval expired unanswered).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, cast

from .._lazy import value_class
from ..errors import InputError
from ._types import Decision

__all__ = ["ApprovalAnswer"]

_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
"""Run ids (`cm_<uuid>`) and approval ids (`ap_<uuid>`) are drawn from this, and so is every
id a UI route takes from its path: an id outside it names nothing that could be pending."""


@value_class
class ApprovalAnswer:
    """A person's decision on one pending approval, as a face hands it down.

    Attributes:
        run_id: The run that waits (`runId` of the waiting envelope).
        approval_id: The approval (`pendingApprovals[].id`).
        decision: `"approve"` or `"deny"`.
        note: Why, at most `MAX_NOTE_CHARS` characters; a denied call reports it to the cell.
        remember: Apply the decision to the tool for the rest of the session.
        by: Who decided, as the audit trail records it (a user name, `"control-ui"`,
            `"mcp-elicitation"`), at most `MAX_BY_CHARS` characters.

    Raises:
        InputError: a field is not what it must be; the message names the field, shows the
            value and says what it may be.
    """

    MAX_NOTE_CHARS: ClassVar[int] = 2_000
    MAX_BY_CHARS: ClassVar[int] = 200

    run_id: str
    approval_id: str
    decision: Decision
    note: str = ""
    remember: bool = False
    by: str = ""

    def __post_init__(self) -> None:
        problem = _problem(vars(self))
        if problem is not None:
            raise InputError(problem)

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], *, run_id: str, approval_id: str, by: str
    ) -> ApprovalAnswer:
        """The answer a card posts, `{"decision": "approve" | "deny", "note"?: str,
        "remember"?: bool}`, for the run and approval its address names.

        Raises:
            InputError: as the constructor (a missing `decision` is shown as `None`).
        """
        remember = data.get("remember")
        return cls(
            run_id=run_id,
            approval_id=approval_id,
            decision=cast(Decision, data.get("decision")),  # checked on construction
            note=data.get("note", ""),
            remember=False if remember is None else remember,
            by=by,
        )


def _problem(fields: Mapping[str, Any]) -> str | None:
    """What is wrong with an answer's fields (`None`: nothing), in the order a reader fills
    them in: which approval, then the decision about it."""
    for name in ("run_id", "approval_id"):
        value = fields[name]
        if not isinstance(value, str) or not _ID.fullmatch(value):
            kind = name.removesuffix("_id")
            return (
                f"{kind} id {value!r:.80} is not allowed: ids are 1 to 200 letters, digits, "
                "`_`, `.`, `:` or `-`, as the waiting envelope gives them."
            )
    return _decision_problem(fields)


def _decision_problem(fields: Mapping[str, Any]) -> str | None:
    decision, note, remember, by = (fields[k] for k in ("decision", "note", "remember", "by"))
    if decision not in ("approve", "deny"):
        return f"`decision` must be 'approve' or 'deny', got {decision!r:.80}."
    if not isinstance(note, str):
        return f"`note` must be a string, got {note!r:.80}."
    if len(note) > ApprovalAnswer.MAX_NOTE_CHARS:
        limit = ApprovalAnswer.MAX_NOTE_CHARS
        return f"`note` has {len(note)} characters; shorten it to at most {limit}."
    if not isinstance(remember, bool):
        return f"`remember` must be true or false, got {remember!r:.80}."
    if not isinstance(by, str) or len(by) > ApprovalAnswer.MAX_BY_CHARS:
        limit = ApprovalAnswer.MAX_BY_CHARS
        return f"`by` must be a string of at most {limit} characters, got {by!r:.80}."
    return None
