"""The `SessionStore` seam: where session-store entries and parked cells live.

A backend keeps these records:

* **entries**: the committed `store(key, value)` values of a session, as compact JSON text
  with a network-provenance flag. `apply` writes one completed cell's changes atomically
  and re-checks the session's total against a limit inside the same transaction, so two
  cells committing at once are checked in commit order (the later one can fail).
* **parked runs**: opaque snapshot bytes plus a JSON-shaped `meta` mapping for each run id,
  for continuations that outlive a process. `take_run` reads and removes in one step, so two
  processes racing to resume one run cannot both win.
* **transcripts**: an append-only list of JSON objects per session (the agent's turns), and
  a summary of each session that has one (`list_sessions`).
* **documents**: hosted canvas documents, a set of files (relative path → bytes) per `ref`,
  replaced as a whole.

Backends: `SQLiteStore` (durable, shareable between processes) and `MemoryStore` (tests, and
the default when no store is configured).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._records import ParkedRun, SessionInfo, StoredValue

__all__ = ["ParkedRun", "SessionInfo", "SessionStore", "StoredValue"]


@runtime_checkable
class SessionStore(Protocol):
    """Durable state of Code Mode sessions. Every method is a coroutine; none blocks the loop.

    Implementations must be safe to call concurrently from several tasks; `apply`,
    `save_run`, `take_run`, `append_transcript` and `put_document` must each be atomic.
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

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        """Append JSON-object entries to a session's transcript, in order, atomically.

        Raises:
            InputError: when an entry is not a JSON-serialisable mapping; nothing is appended.
        """
        ...

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        """A session's transcript entries in append order (empty for an unknown session)."""
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """The sessions that have a transcript, most recently appended to first."""
        ...

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        """Store a hosted canvas document, replacing every file it had before.

        Args:
            ref: The document's reference (non-empty).
            files: Relative POSIX path (`index.html`, `assets/app.js`) → file bytes;
                `index.html` is required.

        Raises:
            InputError: for an empty ref, a bad path, non-bytes data or a missing
                `index.html`; the previous document is kept then.
        """
        ...

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        """One file of a document, or `None` when the document or the file is unknown.

        `path` is matched exactly against the stored paths, so `../x` or `/index.html` is
        simply not found.
        """
        ...

    async def close(self) -> None:
        """Release the backend's resources. Idempotent."""
        ...
