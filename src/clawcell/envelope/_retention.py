"""Automatic retention of an oversized final value (spec `code-mode.md` §6.5): the one decision.

When the output budget replaces a final object or array with a truncation marker, the value is
saved in the run's results store and the model is shown its reference marker instead
(`{truncated, reference, guidance}`), so a later cell can `results.load` what the model could
not be shown. When it cannot be kept, the ordinary marker's `guidance` says why, in the
protocol's words. Every reason is decided here, in this order:

1. headless cells and values that are not objects or arrays: the ordinary marker, unchanged;
2. restart-safe cells: "Not retained in restart-safe mode." (nothing is saved: a saved
   result would not survive the restart the cell is safe against);
3. no results store, or a closed one: "Not retained: run catalog is unavailable or changed.";
4. a value the worker kept only in part, or larger than the store's allowance: the data
   allowance reason; a full store: the capacity reason;
5. a reference that does not fit the output budget: the output-budget reason, and the save
   is released again, so a failed retention never consumes capacity.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal

from .._jsjson import dumps, utf8_len
from ._fitting import JsonSource
from ._ledger import OutputLedger, Projection, ReferenceValue
from ._results import ResultsStore

if TYPE_CHECKING:  # references are described and fitted only for oversized values
    from ._descriptor import ResultReference

__all__ = [
    "NOT_RETAINED_CAPACITY",
    "NOT_RETAINED_CATALOG",
    "NOT_RETAINED_DATA_ALLOWANCE",
    "NOT_RETAINED_OUTPUT_BUDGET",
    "NOT_RETAINED_RESTART_SAFE",
    "RETAINED_GUIDANCE",
    "RetentionMode",
    "minimal_reference_marker_bytes",
    "reference_marker",
    "reference_marker_bytes",
    "retain_final_value",
    "retain_oversized_value",
]

RETAINED_GUIDANCE: Final = (
    "Full result saved for this run; use results.load(reference.id) in a later exec."
)
NOT_RETAINED_DATA_ALLOWANCE: Final = (
    "Not retained: result exceeds the data allowance. Return less data."
)
NOT_RETAINED_CAPACITY: Final = (
    "Not retained: result-store capacity exceeded. Delete references or return less data."
)
NOT_RETAINED_CATALOG: Final = (
    "Not retained: run catalog is unavailable or changed. Return less data."
)
NOT_RETAINED_OUTPUT_BUDGET: Final = (
    "Not retained: reference exceeds output budget. Return less data."
)
NOT_RETAINED_RESTART_SAFE: Final = "Not retained in restart-safe mode. Return less data."

RetentionMode = Literal["interactive", "restart_safe", "headless"]

_REFUSALS: Final = {
    "data_allowance": NOT_RETAINED_DATA_ALLOWANCE,
    "capacity": NOT_RETAINED_CAPACITY,
}


@functools.cache
def _marker_overhead() -> int:
    """Bytes of `{"truncated":true,"reference":…,"guidance":…}` apart from the reference."""
    return (
        utf8_len(dumps({"truncated": True, "reference": None, "guidance": RETAINED_GUIDANCE})) - 4
    )


def reference_marker(reference: ResultReference, max_bytes: int) -> dict[str, Any] | None:
    """The retained value `{truncated, reference, guidance}` within `max_bytes`, or `None`.

    The reference shrinks by `fit_reference`; `None` means not even its identity fits.
    """
    from ._descriptor import fit_reference

    fitted = fit_reference(reference, max_bytes - _marker_overhead())
    if fitted is None:
        return None
    return {"truncated": True, "reference": fitted, "guidance": RETAINED_GUIDANCE}


def reference_marker_bytes(reference: ResultReference) -> int:
    """Bytes of the whole retained value: the value size `V` of the budget split (§6.2)."""
    from ._descriptor import reference_bytes

    return _marker_overhead() + reference_bytes(reference)


def minimal_reference_marker_bytes(reference: ResultReference) -> int:
    """Bytes of the retained value with blank shape/preview: `R` of §6.2 step 3."""
    from ._descriptor import identity_only, reference_bytes

    return _marker_overhead() + reference_bytes(identity_only(reference))


def retain_oversized_value(
    store: ResultsStore | None,
    value: JsonSource,
    deliver: Callable[[ResultReference], bool],
    *,
    mode: RetentionMode = "interactive",
    network_content: bool = False,
) -> ResultReference | str | None:
    """Decide the automatic retention of a final value the output budget truncated.

    Call it only when the projection replaced the value with a truncation marker.
    `deliver(reference)` re-projects the response offering the reference and says whether
    the reference marker was used; when it was not (or it raised), the save is released.

    Returns:
        The reference when it was saved and delivered; a non-retention reason to use as the
        ordinary marker's `guidance`; or `None` when the value is not eligible and the
        ordinary marker stays as it is (see the module docstring for the order).
    """
    if mode == "headless" or not value.text.startswith(("{", "[")):
        return None
    if mode == "restart_safe":
        return NOT_RETAINED_RESTART_SAFE
    if store is None:
        return NOT_RETAINED_CATALOG
    if not value.complete:
        return NOT_RETAINED_DATA_ALLOWANCE
    if store.closed:
        return NOT_RETAINED_CATALOG
    admitted = store.admit(value.text, network_content=network_content)
    if isinstance(admitted, str):
        return _REFUSALS[admitted]
    delivered = False
    try:
        delivered = deliver(admitted)
    finally:
        if not delivered:
            store.discard(admitted["id"])
    return admitted if delivered else NOT_RETAINED_OUTPUT_BUDGET


def retain_final_value(
    ledger: OutputLedger,
    value: JsonSource,
    store: ResultsStore | None,
    accept: Callable[[Projection], bool] | None,
    *,
    mode: RetentionMode,
    network_content: bool = False,
) -> Projection | None:
    """The projection of a response whose final value was truncated, after retention.

    Returns the reference projection, or the ordinary marker carrying the non-retention
    reason, or `None` to keep the projection as it was.
    """
    shown: list[Projection] = []

    def deliver(reference: ResultReference) -> bool:
        offered = ReferenceValue(
            original_bytes=reference_marker_bytes(reference),
            minimal_bytes=minimal_reference_marker_bytes(reference),
            render=lambda allowance: reference_marker(reference, allowance),
        )
        candidate = ledger.fit(value_json=offered, accept=accept)
        if candidate.value_truncated:
            return False
        shown.append(candidate)
        return True

    decision = retain_oversized_value(
        store, value, deliver, mode=mode, network_content=network_content
    )
    if decision is None:
        return None
    if not isinstance(decision, str):
        return shown[0]
    return ledger.fit(value_json=value, accept=accept, value_guidance=decision)
