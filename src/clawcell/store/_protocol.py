"""The `SessionStore` seam: where session-store entries and parked cells live.

`SessionStore` is the sum of five small role protocols, one per kind of record; a backend
implements them all, and a consumer asks only for the role it reads (`SessionView` an
`EntryStore`, the Control UI a `DocumentStore`, `LeaseKeeper` a `RunStore`). Each role is
`runtime_checkable`, so `isinstance(store, DocumentStore)` asks whether a store holds documents.

* **entries** (`EntryStore`): the committed `store(key, value)` values of a session, as
  compact JSON text with a network-provenance flag. `apply` writes one completed cell's
  changes atomically and re-checks the session's total against a limit inside the same
  transaction, so two cells committing at once are checked in commit order (the later one
  can fail).
* **parked runs** (`RunStore`): opaque snapshot bytes plus a JSON-shaped `meta` mapping for
  each run id, for continuations that outlive a process. Workers that share one database
  **claim runs with a lease** (`claim_run`, `renew_lease`, `release_run`) and every write is
  **fenced** by the lease's version (`save_run(expected_version=)`, `update_run_meta`), so a
  worker that lost its lease can never overwrite the new owner's state; `wait_for_change`
  wakes a waiter when a run changes. See `docs/scale-out.md`.
* **saved results** (`ResultStore`): the JSON text of `results.save` values by scope and id,
  with an expiry, so a later `exec` of the same reply can load them on another worker.
* **transcripts** (`TranscriptStore`): an append-only list of JSON objects per session (the
  agent's turns), and a summary of each session that has one (`list_sessions`).
* **documents** (`DocumentStore`): hosted canvas documents, a set of files (relative path →
  bytes) per `ref`, replaced as a whole.

Approval decisions and their audit trail are entries of derived session ids
(`clawcell.approvals.DecisionLedger`), so they need no role of their own. `SessionStore` adds
`sweep` (expired runs and results) and `close`.

Backends: `SQLiteStore` (durable, shareable between processes on one host), `PostgresStore`
(durable, shareable between hosts) and `MemoryStore` (tests, and the default when no store is
configured).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._records import ClaimedRun, Lease, ParkedRun, SessionInfo, StoredValue, SweepReport

__all__ = [
    "ClaimedRun",
    "DocumentStore",
    "EntryStore",
    "Lease",
    "ParkedRun",
    "ResultStore",
    "RunStore",
    "SessionInfo",
    "SessionStore",
    "StoredValue",
    "SweepReport",
    "TranscriptStore",
]


@runtime_checkable
class EntryStore(Protocol):
    """The committed `store(key, value)` entries of each session; `apply` is atomic."""

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


@runtime_checkable
class RunStore(Protocol):
    """Parked runs: snapshots and `meta`, leases and fenced writes, change notifications.

    `save_run` is atomic, and each lease operation (`claim_run`, the fenced writes) one
    compare-and-set.
    """

    async def save_run(
        self,
        session_id: str,
        run_id: str,
        blob: bytes,
        meta: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        """Insert or replace a parked run's snapshot and `meta`; returns its version.

        Without `expected_version` (a worker parking a new run, or a single process): the run
        is written unconditionally, parked unowned; an existing run's lease is dropped and its
        version raised, so a holder of that lease is fenced out. With `expected_version` (a
        lease holder checkpointing): the write happens only while the run's version is still
        that one; the lease is kept and the version stays.

        `meta` must be JSON-serialisable; its `expiresAt` (seconds since the epoch) is when
        `sweep` may remove the run.

        Raises:
            StaleRunError: with `expected_version`, when the run is gone or was claimed since.
            InputError: when `meta` is not JSON-serialisable.
        """
        ...

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        """A parked run, or `None` when unknown (never saved, or deleted)."""
        ...

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        """Delete a parked run; whether it existed."""
        ...

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        """The session's parked runs, oldest first, with empty `blob`s (metadata only)."""
        ...

    async def claim_run(
        self, session_id: str, run_id: str, *, owner: str, lease_seconds: float
    ) -> ClaimedRun | None:
        """Take a lease on a parked run and read its last saved state, atomically.

        The claim succeeds when the run exists, is not past its `expiresAt`, and is unowned
        or its lease has ended (its owner died or stalled: the run is revived from its last
        saved snapshot). It raises the version by one; the returned lease carries it.

        Args:
            session_id: The run's session.
            run_id: The run.
            owner: This worker's id, unique per process (`host:pid:uuid`).
            lease_seconds: How long the lease lasts unless renewed.

        Returns:
            The run and its lease, or `None` when the run is unknown, expired or held by a
            live lease (`load_run` tells which; `wait_for_change` waits for a release).
        """
        ...

    async def renew_lease(self, lease: Lease, *, lease_seconds: float) -> Lease:
        """Extend a held lease to `lease_seconds` from now; the version stays.

        Raises:
            StaleRunError: when the run is gone or another worker claimed it since.
        """
        ...

    async def release_run(self, lease: Lease) -> None:
        """Drop a held lease, leaving the run parked and claimable; the version stays.

        Raises:
            StaleRunError: when the run is gone or another worker claimed it since.
        """
        ...

    async def update_run_meta(
        self, session_id: str, run_id: str, *, version: int, patch: Mapping[str, Any]
    ) -> None:
        """Apply a JSON Merge Patch (RFC 7396) to a parked run's `meta`, fenced by `version`.

        For results of tool calls that settle after the run parked: the worker that parked
        it (holding the version its save or claim returned) writes each result back as it
        arrives, so a later claim by any worker sees it. The snapshot is untouched.

        Raises:
            StaleRunError: when the run is gone or its version is no longer `version`.
            InputError: when the patch is not JSON-serialisable.
        """
        ...

    async def wait_for_change(
        self, session_id: str, run_id: str, *, timeout: float, since: int | None = None
    ) -> bool:
        """Wait until a parked run changes (saved, patched, claimed, released or removed).

        Args:
            session_id: The run's session.
            run_id: The run.
            timeout: Seconds to wait at most.
            since: A `ParkedRun.revision` the caller saw; a run already past it returns at
                once. Without it, changes after the call starts count.

        Returns:
            `True` when the run changed or is gone, `False` on timeout. A lease that merely
            runs out is not a change: wait at most until `lease_expires_at`, then claim.
        """
        ...


@runtime_checkable
class ResultStore(Protocol):
    """Saved results (`results.save`) by scope and id, each with an expiry."""

    async def put_result(
        self, scope: str, result_id: str, json: str, *, expires_at: float | None = None
    ) -> None:
        """Save (or replace) one result's JSON text, expiring at `expires_at` (`None`: never)."""
        ...

    async def get_result(self, scope: str, result_id: str) -> str | None:
        """A saved result's JSON text, or `None` when unknown, deleted or expired."""
        ...

    async def list_results(self, scope: str) -> list[str]:
        """The ids of a scope's saved results that have not expired, sorted."""
        ...

    async def delete_result(self, scope: str, result_id: str) -> bool:
        """Delete a saved result; whether it existed (expired or not)."""
        ...


@runtime_checkable
class TranscriptStore(Protocol):
    """Each session's append-only transcript, and the list of sessions that have one."""

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


@runtime_checkable
class DocumentStore(Protocol):
    """Hosted canvas documents, each a set of files replaced as a whole."""

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


@runtime_checkable
class SessionStore(EntryStore, RunStore, ResultStore, TranscriptStore, DocumentStore, Protocol):
    """Durable state of Code Mode sessions: every role, with `sweep` and `close`. Every method
    is a coroutine; none blocks the loop.

    Implementations must be safe to call concurrently from several tasks; `apply`,
    `save_run`, `append_transcript` and `put_document` must each be atomic, and each lease
    operation (`claim_run`, the fenced writes) one compare-and-set. Backends shared by several
    processes must keep these guarantees across them.
    """

    async def sweep(self, *, now: float | None = None) -> SweepReport:
        """Remove the parked runs past their `expiresAt` that no live lease holds, and the
        saved results past their `expires_at`."""
        ...

    async def close(self) -> None:
        """Release the backend's resources. Idempotent."""
        ...
