"""How a leg ended (`LegOutcome`): a leaf value, settled into an envelope by `_runs._settle`.

A leg's outcome is the cell's answer in host terms: completed with a value, waiting with its
pending requests, or failed with a failure code, phase and message.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..envelope import FailurePhase
from ._failures import FailureCode

__all__ = ["LegOutcome", "failed_outcome"]


class LegOutcome(NamedTuple):
    """How one `exec` or `wait` leg ended (immutable; a named tuple rather than a frozen
    dataclass because every leg makes one, and a tuple of eight fields is built in one call
    where the dataclass sets each field through `object.__setattr__`)."""

    status: Literal["completed", "waiting", "failed"]
    value_json: str | None = None
    reason: str = ""
    pending: tuple[tuple[str, str], ...] = ()
    code: FailureCode = "internal_error"
    phase: Literal["input", "guest", "bridge", "host"] = "guest"
    error: str = ""
    ran: bool = True
    """False when the code never ran (it did not parse): the call is rejected, no leg ended."""

    @classmethod
    def not_parsed(cls, error: str) -> LegOutcome:
        """The outcome of code that does not parse: `invalid_input` in the `input` phase."""
        return cls(status="failed", code="invalid_input", phase="input", error=error, ran=False)


def failed_outcome(code: FailureCode, phase: FailurePhase, error: str) -> LegOutcome:
    """A failed outcome decided by the host (not by the guest)."""
    return LegOutcome(status="failed", code=code, phase=phase, error=error)
