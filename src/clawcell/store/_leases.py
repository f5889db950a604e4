"""Rules shared by every backend's run leases: argument checks and the stale-write error.

The rules themselves (docs/scale-out.md):

* a claim succeeds on a run that exists, is not past `expiresAt`, and is unowned or whose
  lease has ended; it raises the run's version by one and hands that version out;
* a fenced write (`save_run(expected_version=)`, `update_run_meta`, `renew_lease`,
  `release_run`) succeeds only while the run's version is the writer's; anything else is a
  `StaleRunError`, and the store is left as it was.
"""

from __future__ import annotations

import math

from ..errors import ConfigurationError, StaleRunError

__all__ = ["check_claim", "check_lease_seconds", "stale_error"]


def check_claim(owner: object, lease_seconds: object) -> float:
    """Check a claim's owner id and lease length; the length in seconds."""
    if not isinstance(owner, str) or not owner:
        raise ConfigurationError(
            f"`owner` must be a non-empty string unique to this worker process, got {owner!r}."
        )
    return check_lease_seconds(lease_seconds)


def check_lease_seconds(lease_seconds: object) -> float:
    """A lease length: a finite number of seconds, zero or more."""
    if (
        isinstance(lease_seconds, bool)
        or not isinstance(lease_seconds, int | float)
        or not math.isfinite(lease_seconds)
        or lease_seconds < 0
    ):
        raise ConfigurationError(
            f"`lease_seconds` must be a finite number of seconds ≥ 0, got {lease_seconds!r}."
        )
    return float(lease_seconds)


def stale_error(session_id: str, run_id: str, expected: int, current: int | None) -> StaleRunError:
    """The refusal of a write fenced by version `expected` when the run is at `current`."""
    if current is None:
        return StaleRunError(
            f"parked run {run_id!r} of session {session_id!r} is gone (taken, deleted or "
            "swept); stop working on it and drop this worker's copy."
        )
    if current == expected:
        return StaleRunError(
            f"parked run {run_id!r} of session {session_id!r} is not leased to this worker "
            "(it was released); claim it again before renewing or releasing."
        )
    return StaleRunError(
        f"parked run {run_id!r} of session {session_id!r} is at version {current}, not "
        f"{expected}: another worker claimed it since; stop working on it and drop this "
        "worker's copy."
    )
