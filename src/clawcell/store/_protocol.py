"""The `SessionStore` seam: where session-store entries and parked cells live.

A backend keeps two kinds of records per session id:

* **entries**: the committed `store(key, value)` values of a session, as compact JSON text
  with a network-provenance flag. `apply` writes one completed cell's changes atomically
  and re-checks the session's total against a limit inside the same transaction, so two
  cells committing at once are checked in commit order (the later one can fail).
* **parked runs**: opaque snapshot bytes plus a JSON-shaped `meta` mapping for each run id,
  for continuations that outlive a process. `take_run` reads and removes in one step, so two
  processes racing to resume one run cannot both win.

Backends: `SQLiteStore` (durable, shareable between processes) and `MemoryStore` (tests, and
the default when no store is configured).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._jsjson import utf8_len

__all__ = ["ParkedRun", "SessionStore", "StoredValue"]


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True, kw_only=True)
class ParkedRun:
    """A parked cell as a backend holds it.

    Attributes:
        run_id: The run id (`cm_<uuid>`).
        blob: The snapshot bytes, exactly as saved.
        meta: JSON-shaped metadata the continuation code chose (deadlines, pending calls).
        saved_at: When it was last saved, in seconds since the epoch.
    """

    run_id: str
    blob: bytes
    meta: Mapping[str, Any]
    saved_at: float


@runtime_checkable
class SessionStore(Protocol):
    """Durable state of Code Mode sessions. Every method is a coroutine; none blocks the loop.

    Implementations must be safe to call concurrently from several tasks; `apply`,
    `save_run` and `take_run` must each be atomic.
    """

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        """The committed value of `key`, or `None`."""
        ...

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        """All committed entries of a session (its projection)."""
        ...

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        """Set one entry, with no limit checks (host-side seeding and migrations)."""
        ...

    async def delete(self, session_id: str, key: str) -> bool:
        """Remove one entry; whether it existed."""
        ...

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        """Apply one cell's sets (`StoredValue`) and deletes (`None`) atomically.

        Raises:
            StoreRangeError: when the session's total value bytes after the writes exceed
                `max_total_bytes`; nothing is written then.
        """
        ...

    async def save_run(
        self, session_id: str, run_id: str, blob: bytes, meta: Mapping[str, Any]
    ) -> None:
        """Insert or replace a parked run. `meta` must be JSON-serialisable."""
        ...

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        """A parked run, or `None` when unknown (never saved, deleted or taken)."""
        ...

    async def take_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        """Load and delete a parked run in one step; only one caller ever gets it."""
        ...

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        """Delete a parked run; whether it existed."""
        ...

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        """The session's parked runs, oldest first, with empty `blob`s (metadata only)."""
        ...

    async def close(self) -> None:
        """Release the backend's resources. Idempotent."""
        ...
