"""The output ledger: the one output budget of a Code Mode cell (spec `code-mode.md` §5, §6.1–§6.4).

A cell's `output` items, its final `value` and its `error` share one budget of
`maxOutputBytes` UTF-8 bytes, measured on the compact JSON JavaScript would print. The
budget spans the whole cell: the first `exec` and every `wait` that resumes it draw from the
same cumulative output, and each response carries only what the model has not seen yet.

`OutputLedger` is that per-cell state. The cell loop appends each output item's JSON text as
the guest produced it (bytes are counted on those texts; nothing is re-serialised), then asks
for a `Projection` of one response:

1. The error keeps its leading cause: it may use everything the other channels do not need,
   and at least half the budget; beyond that it is cut and ends in ` [error truncated]`.
2. The rest is split between output and value. The value may reserve half of it; output takes
   what it needs first, and either channel donates what it does not use.
3. A channel that does not fit becomes a truncation marker whose `prefix` is the longest
   prefix of the channel's JSON text that lets the marker fit (the JSON-prefix fitter, §6.4).
   The output marker always summarises the *whole* cumulative output of the cell.
4. Delivery is incremental: entries already delivered are not repeated, and an unchanged
   summary marker is not re-sent (§6.3). `project` is pure; `commit` records delivery.

`OutputLedger.fit` adds §6.2 step 7: when the rendered envelope must also fit a model's
context (`ModelBudget`), it binary-searches the largest smaller budget that fits.

Memory stays bounded: once the cumulative output JSON exceeds `maxOutputBytes`, only its
first `maxOutputBytes` bytes are kept, and later items only add to the byte count, so their
bytes still show in `omittedBytes`. A marker prefix can never be longer than that anyway.

Auto-saved references (§6.5) belong to the results store; this module only leaves the seam
of §6.2 step 3 (`reference_bytes`) and reports `Projection.value_truncated`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any

from .._jsjson import json_string_bytes, utf8_len
from .._jsonvalue import parse_json_text
from .._lazy import positional_value_class, value_class
from ..errors import ClawcellError, ConfigurationError
from ._budget import MODEL_BUDGET_MESSAGE
from ._fitting import (
    TRUNCATION_GUIDANCE,
    JsonSource,
    bound_error,
    marker_fixed_bytes,
    truncate_utf8,
    truncation_marker,
)

__all__ = ["OutputLedger", "Projection", "ReferenceValue"]


@value_class
class ReferenceValue:
    """A final value shown as its auto-saved reference marker (§6.5).

    Attributes:
        original_bytes: Bytes of the whole reference marker (`V` of §6.2).
        minimal_bytes: Bytes of the marker with blank shape and preview (`R`, step 3).
        render: The marker fitted to a byte allowance, or `None` when even the reference's
            identity does not fit (the projection then reports `value_truncated`).
    """

    original_bytes: int
    minimal_bytes: int
    render: Callable[[int], dict[str, Any] | None]


@positional_value_class
class _Entries:
    """How many entries a channel shows."""

    count: int


@positional_value_class
class _Summary:
    """A summarized value's sizes."""

    original_bytes: int
    prefix_bytes: int


_Receipt = _Entries | _Summary


@value_class
class Projection:
    """What one `exec`/`wait` response carries on its bounded channels.

    Attributes:
        output: The output items of this response: entries not delivered before, or a
            summary marker of the whole cumulative output (or `[]` if unchanged).
        value: The final value, a truncation marker, or `None` when `has_value` is false.
        has_value: Whether the response has a `value` key.
        error: The error, truncated to its allowance, or `None`.
        budget: The byte budget the projection was made with (`maxOutputBytes` or less).
        value_truncated: Whether the value was replaced by a marker (the auto-save trigger).
    """

    output: list[Any]
    value: Any
    has_value: bool
    error: str | None
    budget: int
    value_truncated: bool
    receipt: _Receipt = field(repr=False)


class OutputLedger:
    """Cumulative output of one cell and what of it was delivered, across exec and waits."""

    def __init__(self, max_output_bytes: int) -> None:
        if max_output_bytes < 1:
            raise ConfigurationError(
                f"`max_output_bytes` must be positive, got {max_output_bytes!r}."
            )
        self._max = max_output_bytes
        self._items: list[str] = []
        self._parsed: list[Any] = []
        self._count = 0
        self._bytes = 0
        self._retained: str | None = None
        self._receipt: _Receipt = _Entries(0)

    def to_state(self) -> dict[str, Any]:
        """The ledger as JSON-shaped data, to persist with a parked cell."""
        receipt = self._receipt
        return {
            "max": self._max,
            "items": self._items,
            "count": self._count,
            "bytes": self._bytes,
            "retained": self._retained,
            "receipt": [receipt.count]
            if isinstance(receipt, _Entries)
            else [receipt.original_bytes, receipt.prefix_bytes],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> OutputLedger:
        """The ledger `to_state` described."""
        ledger = cls(int(state["max"]))
        ledger._items = [str(item) for item in state["items"]]
        ledger._count = int(state["count"])
        ledger._bytes = int(state["bytes"])
        retained = state.get("retained")
        ledger._retained = None if retained is None else str(retained)
        receipt = [int(n) for n in state["receipt"]]
        ledger._receipt = _Entries(receipt[0]) if len(receipt) == 1 else _Summary(*receipt)
        return ledger

    @property
    def max_output_bytes(self) -> int:
        """The cell's `maxOutputBytes`."""
        return self._max

    @property
    def output_bytes(self) -> int:
        """UTF-8 bytes of the whole cumulative output array JSON (0 when empty)."""
        return self._bytes

    def append(self, item_json: str) -> None:
        """Record one output item, given as its compact JSON text from the guest."""
        size = utf8_len(item_json)
        self._count += 1
        self._bytes += size + (2 if self._count == 1 else 1)
        if self._retained is not None:
            return
        self._items.append(item_json)
        if self._bytes > self._max:
            self._retained = truncate_utf8(self._output_text(), self._max)
            self._items, self._parsed = [], []

    def _output_text(self) -> str:
        return "[" + ",".join(self._items) + "]"

    def _output_source(self) -> JsonSource:
        if self._retained is not None:
            return JsonSource(text=self._retained, original_bytes=self._bytes, complete=False)
        return JsonSource(text=self._output_text(), original_bytes=self._bytes, complete=True)

    def project(
        self,
        *,
        value_json: str | JsonSource | ReferenceValue | None = None,
        error: str | None = None,
        budget: int | None = None,
        value_guidance: str = TRUNCATION_GUIDANCE,
        reference_bytes: int = 0,
    ) -> Projection:
        """Project one response within `budget` bytes (default `maxOutputBytes`); pure.

        Args:
            value_json: The final value's compact JSON (a string value includes its quotes),
                or `None` when this response has no value.
            error: The failure diagnostic, or `None`.
            budget: A smaller budget to project with (model-result fitting).
            value_guidance: `guidance` of a value marker (auto-save non-retention reasons).
            reference_bytes: Bytes of the minimal auto-save reference marker to reserve for
                the value (§6.2 step 3), or 0 when no reference is offered.
        """
        trial = self._trial(value_json, error, budget, value_guidance, reference_bytes)
        return self._incremental(trial)

    def fit(
        self,
        *,
        value_json: str | JsonSource | ReferenceValue | None = None,
        error: str | None = None,
        accept: Callable[[Projection], bool] | None = None,
        value_guidance: str = TRUNCATION_GUIDANCE,
        reference_bytes: int = 0,
    ) -> Projection:
        """Project with the largest budget whose rendered envelope `accept`s (§6.2 step 7).

        `accept` renders the envelope from a trial projection and says whether it fits the
        model (see `ModelBudget.accepts`). As in the original, trials carry the *cumulative*
        output channel (all entries or the summary marker), not only the undelivered part.
        The returned projection is incremental, ready for `commit`.

        Raises:
            ClawcellError: `output_limit_exceeded` with `MODEL_BUDGET_MESSAGE` when not even
                a budget of 0 bytes fits.
        """
        source = JsonSource.capture(value_json) if isinstance(value_json, str) else value_json

        def trial(budget: int) -> Projection:
            return self._trial(source, error, budget, value_guidance, reference_bytes)

        best = trial(self._max)
        if accept is not None and not accept(best):
            best = _bisect_budget(trial, accept, self._max - 1)
        return self._incremental(best)

    def deliver_whole(self, value_json: str | None) -> Projection | None:
        """The common response without a trial projection: when the whole cumulative output
        and the value (`value_json`, or `None` without one) fit `maxOutputBytes` as they are,
        with no error and no model budget to fit, this records delivery and returns what
        `fit` then `commit` would (the undelivered entries, the parsed value); `None` when
        they do not fit, or an earlier response summarised the output (call `fit` then).

        Why it is the same: with both channels whole, output and value never compete for the
        budget (§6.2 steps 2–3 give each at least its size), so no marker is made and no
        budget is searched.
        """
        prior = self._receipt
        if self._retained is not None or not isinstance(prior, _Entries):
            return None
        value_bytes = 0 if value_json is None else utf8_len(value_json)
        if self._bytes + value_bytes > self._max:
            return None
        parsed = self._parsed
        if len(parsed) < len(self._items):
            parsed.extend(parse_json_text(item) for item in self._items[len(parsed) :])
        count = self._count
        if prior.count != count:
            self._receipt = _Entries(count)
        return Projection(
            output=parsed[prior.count :],
            value=None if value_json is None else parse_json_text(value_json),
            has_value=value_json is not None,
            error=None,
            budget=self._max,
            value_truncated=False,
            receipt=self._receipt,
        )

    def commit(self, projection: Projection) -> None:
        """Record that `projection` was delivered to the model."""
        self._receipt = projection.receipt

    def _trial(
        self,
        value_json: str | JsonSource | ReferenceValue | None,
        error: str | None,
        budget: int | None,
        value_guidance: str,
        reference_bytes: int,
    ) -> Projection:
        value = JsonSource.capture(value_json) if isinstance(value_json, str) else value_json
        if isinstance(value, ReferenceValue):
            reference_bytes = value.minimal_bytes
        split = _Split(
            budget=self._max if budget is None else budget,
            output_bytes=self._bytes,
            value_bytes=0 if value is None else value.original_bytes,
            reference_bytes=reference_bytes,
        )
        error = split.fit_error(error)
        output, charged, receipt = self._project_output(split.output_allowance(error))
        remaining = split.remaining(error) - charged
        shown, truncated = _project_value(value, remaining, value_guidance)
        return Projection(
            output=output,
            value=shown,
            has_value=value is not None,
            error=error,
            budget=split.budget,
            value_truncated=truncated,
            receipt=receipt,
        )

    def _project_output(self, allowance: int) -> tuple[list[Any], int, _Receipt]:
        if self._bytes <= allowance:
            # Parsed once per item; trials and responses share the parsed values.
            self._parsed.extend(parse_json_text(i) for i in self._items[len(self._parsed) :])
            return self._parsed[:], self._bytes, _Entries(self._count)
        marker, size = truncation_marker(self._output_source(), allowance - 2)
        receipt = _Summary(self._bytes, utf8_len(marker["prefix"]))
        return [marker], size + 2, receipt

    def _incremental(self, trial: Projection) -> Projection:
        prior, receipt = self._receipt, trial.receipt
        output = trial.output
        if isinstance(receipt, _Entries) and isinstance(prior, _Entries):
            if prior.count:
                output = output[prior.count :]
        elif isinstance(receipt, _Summary) and prior == receipt:
            output = []
        if output is trial.output:
            return trial  # nothing delivered before: the trial is the response (frozen)
        return Projection(
            output=output,
            value=trial.value,
            has_value=trial.has_value,
            error=trial.error,
            budget=trial.budget,
            value_truncated=trial.value_truncated,
            receipt=receipt,
        )


@value_class
class _Split:
    """The allowances of §6.2 steps 1–4 for one budget."""

    budget: int
    output_bytes: int
    value_bytes: int
    reference_bytes: int

    def fit_error(self, error: str | None) -> str | None:
        if error is None:
            return None
        others = min(self.output_bytes + self.value_bytes, self.budget // 2)
        return bound_error(error, self.budget - others)

    def remaining(self, error: str | None) -> int:
        return self.budget - (0 if error is None else json_string_bytes(error))

    def output_allowance(self, error: str | None) -> int:
        remaining = self.remaining(error)
        reservation = remaining // 2
        if self.reference_bytes and remaining >= self.reference_bytes + self._min_output():
            reservation = max(reservation, self.reference_bytes)
        return remaining - min(self.value_bytes, reservation)

    def _min_output(self) -> int:
        """Bytes of `[marker]` with an empty prefix: the least output can shrink to."""
        if self.output_bytes == 0:
            return 0
        empty = marker_fixed_bytes(TRUNCATION_GUIDANCE) + len(str(self.output_bytes)) + 2
        return min(self.output_bytes, empty + 2)


def _project_value(
    value: JsonSource | ReferenceValue | None, allowance: int, guidance: str
) -> tuple[Any, bool]:
    if value is None:
        return None, False
    if isinstance(value, ReferenceValue):
        marker = value.render(allowance)
        return marker, marker is None
    if value.complete and value.original_bytes <= allowance:
        return parse_json_text(value.text), False
    marker, _ = truncation_marker(value, allowance, guidance)
    return marker, True


def _bisect_budget(
    trial: Callable[[int], Projection], accept: Callable[[Projection], bool], high: int
) -> Projection:
    """Largest-budget trial in `[0, high]` that `accept`s, by the original's bisection."""
    low, best = 0, None
    while low <= high:
        middle = (low + high) // 2
        candidate = trial(middle)
        if accept(candidate):
            best, low = candidate, middle + 1
        else:
            high = middle - 1
    if best is None:
        raise ClawcellError(MODEL_BUDGET_MESSAGE, code="output_limit_exceeded")
    return best
