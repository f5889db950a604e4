"""`clawcell.envelope` exports the envelope's shapes and the steps other packages call; the
fitting primitives and the protocol's message constants stay behind their modules."""

from __future__ import annotations

import clawcell.envelope


def test_the_envelope_package_exports_a_deliberate_list() -> None:
    assert clawcell.envelope.__all__ == [
        "SCOPE_MESSAGE",
        "UNAVAILABLE_MESSAGE",
        "CompletedEnvelope",
        "Envelope",
        "FailedEnvelope",
        "FailurePhase",
        "ModelBudget",
        "OutputLedger",
        "PendingToolCall",
        "Projection",
        "ReferenceValue",
        "ResultReference",
        "ResultsStore",
        "SavedResult",
        "UntrustedEnvelope",
        "WaitingEnvelope",
        "bound_error",
        "completed_envelope",
        "describe",
        "failed_envelope",
        "mark_untrusted",
        "render",
        "settle_envelope",
        "waiting_envelope",
        "wrap_untrusted",
    ]
    assert all(hasattr(clawcell.envelope, name) for name in clawcell.envelope.__all__)
