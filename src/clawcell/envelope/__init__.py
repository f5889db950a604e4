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
from ._budget import MODEL_BUDGET_MESSAGE, ModelBudget
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
from ._fitting import (
    ERROR_TRUNCATED_SUFFIX,
    TRUNCATION_GUIDANCE,
    JsonSource,
    bound_error,
    fit_error,
    fit_json_prefix,
    truncate_utf8,
    truncation_marker,
)
from ._ledger import OutputLedger, Projection, ReferenceValue
from ._results import (
    CAPACITY_MESSAGE,
    CATALOG_CLOSED_MESSAGE,
    INVALID_ID_MESSAGE,
    MAX_RESULTS,
    SCOPE_MESSAGE,
    UNAVAILABLE_MESSAGE,
    Refusal,
    ResultsStore,
    SavedResult,
)
from ._retention import (
    NOT_RETAINED_CAPACITY,
    NOT_RETAINED_CATALOG,
    NOT_RETAINED_DATA_ALLOWANCE,
    NOT_RETAINED_OUTPUT_BUDGET,
    NOT_RETAINED_RESTART_SAFE,
    RETAINED_GUIDANCE,
    RetentionMode,
    minimal_reference_marker_bytes,
    reference_marker,
    reference_marker_bytes,
    retain_final_value,
    retain_oversized_value,
)
from ._untrusted import MAX_UNTRUSTED_CHARS, UntrustedEnvelope, mark_untrusted, wrap_untrusted

if typing.TYPE_CHECKING:
    from ._descriptor import MAX_REFERENCE_BYTES, ResultReference, describe, fit_reference

__getattr__ = _lazy.lazy_exports(
    __name__,
    {"_descriptor": ["MAX_REFERENCE_BYTES", "ResultReference", "describe", "fit_reference"]},
)

__all__ = [
    "CAPACITY_MESSAGE",
    "CATALOG_CLOSED_MESSAGE",
    "ERROR_TRUNCATED_SUFFIX",
    "INVALID_ID_MESSAGE",
    "MAX_REFERENCE_BYTES",
    "MAX_RESULTS",
    "MAX_UNTRUSTED_CHARS",
    "MODEL_BUDGET_MESSAGE",
    "NOT_RETAINED_CAPACITY",
    "NOT_RETAINED_CATALOG",
    "NOT_RETAINED_DATA_ALLOWANCE",
    "NOT_RETAINED_OUTPUT_BUDGET",
    "NOT_RETAINED_RESTART_SAFE",
    "RETAINED_GUIDANCE",
    "SCOPE_MESSAGE",
    "TRUNCATION_GUIDANCE",
    "UNAVAILABLE_MESSAGE",
    "CompletedEnvelope",
    "Envelope",
    "FailedEnvelope",
    "FailurePhase",
    "JsonSource",
    "ModelBudget",
    "OutputLedger",
    "PendingToolCall",
    "Projection",
    "ReferenceValue",
    "Refusal",
    "ResultReference",
    "ResultsStore",
    "RetentionMode",
    "SavedResult",
    "UntrustedEnvelope",
    "WaitingEnvelope",
    "bound_error",
    "completed_envelope",
    "describe",
    "failed_envelope",
    "fit_error",
    "fit_json_prefix",
    "fit_reference",
    "mark_untrusted",
    "minimal_reference_marker_bytes",
    "reference_marker",
    "reference_marker_bytes",
    "render",
    "retain_final_value",
    "retain_oversized_value",
    "settle_envelope",
    "truncate_utf8",
    "truncation_marker",
    "waiting_envelope",
    "wrap_untrusted",
]
