"""What the model reads, within one byte budget: the output ledger, saved results and the envelope.

The stages, in the order a leg's end runs them: the output ledger (`OutputLedger`) projects
the cell's output, value and error into the budget with the fitting primitives; an oversized
final value is retained in the run's `ResultsStore` (one decision, `retain_oversized_value`);
`settle_envelope` builds the wire shape (`Envelope`); `render` gives the text a model reads,
wrapped as untrusted content for network-derived runs.
"""

from __future__ import annotations

import typing

from .. import _lazy
from ._budget import ModelBudget
from ._envelope import (
    CompletedEnvelope,
    Envelope,
    FailedEnvelope,
    FailurePhase,
    PendingToolCall,
    WaitingEnvelope,
    completed_envelope,
    failed_envelope,
    render,
    settle_envelope,
    waiting_envelope,
)
from ._fitting import bound_error
from ._ledger import OutputLedger, Projection, ReferenceValue
from ._results import SCOPE_MESSAGE, UNAVAILABLE_MESSAGE, ResultsStore, SavedResult

if typing.TYPE_CHECKING:
    from ._descriptor import ResultReference, describe
    from ._untrusted import UntrustedEnvelope, mark_untrusted, wrap_untrusted

__getattr__ = _lazy.lazy_exports(
    __name__,
    {
        "_descriptor": ["ResultReference", "describe"],
        # (only a network-derived run's envelope is wrapped)
        "_untrusted": ["UntrustedEnvelope", "mark_untrusted", "wrap_untrusted"],
    },
)

__all__ = [
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
