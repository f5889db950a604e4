"""The values a `SessionStore` hands back: stored entries, parked runs and session summaries."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .._jsjson import utf8_len
from .._lazy import value_class

__all__ = ["ClaimedRun", "Lease", "ParkedRun", "SessionInfo", "StoredValue", "SweepReport"]


@value_class
class StoredValue:
    """One session-store value.

    Attributes:
        json: The value's compact JSON text (what the guest's `JSON.stringify` produced).
        network_content: Whether the run had observed network content when it stored the
            value; loading it marks the loading cell network-derived.
    """

    json: str
    network_content: bool = False

    @functools.cached_property
    def bytes(self) -> int:
        """UTF-8 bytes of `json`: what the 256 KiB and 1 MiB limits count."""
        return utf8_len(self.json)


@value_class
class ParkedRun:
    """A parked cell as a backend holds it.

    Attributes:
        run_id: The run id (`cm_<uuid>`).
        blob: The snapshot bytes, exactly as saved.
        meta: JSON-shaped metadata the continuation code chose (deadlines, pending calls).
        saved_at: When it was last saved, in seconds since the epoch.
        version: The fencing version: 1 when first saved, raised by every claim (and by an
            unfenced re-save), never lowered. Writes fenced with an older version are refused.
        revision: Raised by every change a waiter may care about (save, meta update, claim,
            release); `wait_for_change(..., since=revision)` waits for the next one.
        owner: The worker holding the run's lease, or `None` when it is parked unowned.
        lease_expires_at: When that lease ends (seconds since the epoch), or `None`.
    """

    run_id: str
    blob: bytes
    meta: Mapping[str, Any]
    saved_at: float
    version: int = 1
    revision: int = 1
    owner: str | None = None
    lease_expires_at: float | None = None

    def claimable(self, now: float) -> bool:
        """Whether `claim_run` could take this run at `now`: unowned, or its lease ended."""
        return self.owner is None or (self.lease_expires_at or 0.0) <= now


@value_class
class Lease:
    """A worker's hold on one parked run, and the fencing version its writes carry.

    Attributes:
        session_id: The run's session.
        run_id: The run.
        owner: The worker that holds it (unique per worker process).
        version: The fencing version this claim got; pass it as `expected_version`.
        expires_at: When the lease ends unless renewed (seconds since the epoch); after it,
            another worker may claim the run from its last saved snapshot.
    """

    session_id: str
    run_id: str
    owner: str
    version: int
    expires_at: float


@value_class
class ClaimedRun:
    """What `claim_run` hands the winner: the run's last saved state and the lease.

    Attributes:
        run: The parked run with its snapshot bytes.
        lease: The lease the claim took; its `version` fences every later write.
    """

    run: ParkedRun
    lease: Lease


@value_class
class SweepReport:
    """What one `sweep` removed.

    Attributes:
        runs: Parked runs past their `expiresAt` that no live lease held.
        results: Saved results past their `expires_at`.
    """

    runs: int = 0
    results: int = 0


@value_class
class SessionInfo:
    """A session that has a transcript, as `SessionStore.list_sessions` reports it.

    Attributes:
        session_id: The session id.
        updated_at: When an entry was last appended, in seconds since the epoch.
        entries: How many transcript entries the session has.
    """

    session_id: str
    updated_at: float
    entries: int
