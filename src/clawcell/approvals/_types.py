"""The records of an approval: what is asked, what was decided, and the audit trail."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from .._lazy import value_class

__all__ = [
    "APPROVAL_DENIED",
    "ApprovalDecision",
    "Decision",
    "PendingApproval",
    "PendingApprovalJson",
    "Remember",
]

APPROVAL_DENIED = "approval_denied"
"""The `code` of the guest error a denied (or expired) call rejects with."""

Decision = Literal["approve", "deny"]
Remember = Literal["once", "session"]


class PendingApprovalJson(TypedDict):
    """One entry of a waiting envelope's `pendingApprovals`."""

    id: str
    tool: str
    input: Any
    reason: str
    requestedAt: str


@value_class
class PendingApproval:
    """A call waiting for a person's decision; it has not run.

    Attributes:
        id: The approval id (`ap_<uuid>`), what `decide` takes.
        run_id: The run whose cell made the call.
        request_id: The bridge request id (`bridge:callValue:<n>`).
        tool: The tool's name.
        input: The call's input, after hooks.
        reason: Why it asks (the tool's rule, the policy, or a hook).
        requested_at: When it was asked, in seconds since the epoch.
    """

    id: str
    run_id: str
    request_id: str
    tool: str
    input: Any
    reason: str
    requested_at: float

    def to_json(self) -> PendingApprovalJson:
        """The envelope's camelCase shape (`requestedAt` as ISO 8601 UTC)."""
        return {
            "id": self.id,
            "tool": self.tool,
            "input": self.input,
            "reason": self.reason,
            "requestedAt": _iso(self.requested_at),
        }


@value_class
class ApprovalDecision:
    """A decision, as kept for the audit trail.

    Attributes:
        approval_id: The approval decided.
        run_id: Its run.
        tool: The tool's name.
        decision: `"approve"` or `"deny"`; expiry records `"deny"` with `by="expiry"`.
        note: The person's note (shown to the cell on denial).
        remember: `"session"` when the decision applies to the tool for the rest of the session.
        by: Who decided (free text: a user name, `"ui"`, `"expiry"`).
        decided_at: When, in seconds since the epoch.
        reason: Why an approval expired without a person deciding (`"ttl"` when it waited
            too long, `"superseded"` when a new user message moved the session on); empty
            for a person's decision.
    """

    approval_id: str
    run_id: str
    tool: str
    decision: Decision
    note: str = ""
    remember: Remember = "once"
    by: str = ""
    decided_at: float = 0.0
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {
            "approvalId": self.approval_id,
            "runId": self.run_id,
            "tool": self.tool,
            "decision": self.decision,
            "note": self.note,
            "remember": self.remember,
            "by": self.by,
            "decidedAt": _iso(self.decided_at),
        }
        if self.reason:
            data["reason"] = self.reason
        return data


def _iso(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
