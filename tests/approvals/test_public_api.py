"""`clawcell.approvals` exports the policy, the gate and the decision shapes; its message
constants stay behind their modules."""

from __future__ import annotations

import clawcell.approvals


def test_the_approvals_package_exports_a_deliberate_list() -> None:
    assert clawcell.approvals.__all__ == [
        "ApprovalAnswer",
        "ApprovalDecision",
        "ApprovalRule",
        "Approvals",
        "Decision",
        "DecisionLedger",
        "PendingApproval",
        "PendingApprovalJson",
        "Remember",
        "RunApprovals",
        "ToolPolicy",
        "Verdict",
        "gate_context",
        "rule_reason",
    ]
    assert all(hasattr(clawcell.approvals, name) for name in clawcell.approvals.__all__)
