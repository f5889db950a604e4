"""`MemoryStore`: a `SessionStore` that lives in this process only.

Used when no store is configured and in tests. Every method runs to completion without
awaiting, so each is atomic on its event loop; it is not meant to be shared between threads.
Nothing survives the process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from ...errors import ClosedError
from .._errors import TOTAL_MESSAGE, StoreRangeError
from .._leases import check_claim, check_lease_seconds, stale_error
from .._records import ClaimedRun, Lease, ParkedRun, SessionInfo, StoredValue, SweepReport
from .._runmeta import encode_meta, expiry_of, merge_patch
from .._waiting import Poll, Waiters, wait_for_revision
from ._directory import MemoryDirectory, MemoryMeta

if TYPE_CHECKING:
    from .._search import TranscriptHits

__all__ = ["MemoryStore"]

# Transcripts, their search and documents are imported by the methods that use them: a
# process that runs cells and keeps no transcript never loads them (docs/benchmarks.md,
# "Cold start, stop 49: the import").

# Every write to a run wakes its waiters through the event; the poll is only a safety net.
_POLL: Final = Poll(first=1.0, cap=5.0)


class MemoryStore(MemoryDirectory):
    """An in-memory `SessionStore`; see the protocol for each method's contract."""

    in_process: Final = True
    """Nothing leaves the process, so records are sealed with a per-process key."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, StoredValue]] = {}
        self._runs: dict[str, dict[str, ParkedRun]] = {}
        self._transcripts: dict[str, list[str]] = {}
        self._updated: dict[str, float] = {}
        self._meta: dict[str, MemoryMeta] = {}
        self._documents: dict[str, dict[str, bytes]] = {}
        self._results: dict[tuple[str, str], tuple[str, float | None]] = {}
        self._waiters = Waiters()
        self._closed = False

    async def __aenter__(self) -> MemoryStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _session(self, session_id: str) -> dict[str, StoredValue]:
        self._ensure_open()
        return self._entries.setdefault(session_id, {})

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        return self._session(session_id).get(key)

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        return dict(self._session(session_id))

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        self._session(session_id)[key] = value

    async def put_new(self, session_id: str, key: str, value: StoredValue) -> bool:
        """Set one entry unless the key has one; whether this call wrote it (`FirstWriter`)."""
        entries = self._session(session_id)
        if key in entries:
            return False
        entries[key] = value
        return True

    async def delete(self, session_id: str, key: str) -> bool:
        return self._session(session_id).pop(key, None) is not None

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        proposed = dict(self._session(session_id))
        for key, value in writes.items():
            if value is None:
                proposed.pop(key, None)
            else:
                proposed[key] = value
        if max_total_bytes is not None and _total(proposed) > max_total_bytes:
            raise StoreRangeError(TOTAL_MESSAGE)
        self._entries[session_id] = proposed

    async def save_run(
        self,
        session_id: str,
        run_id: str,
        blob: bytes,
        meta: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        self._ensure_open()
        detached: dict[str, Any] = json.loads(encode_meta(meta))
        old = self._runs.get(session_id, {}).get(run_id)
        owner, lease_expires_at = None, None
        if expected_version is not None:
            old = self._fenced(session_id, run_id, expected_version)
            owner, lease_expires_at, version = old.owner, old.lease_expires_at, old.version
        else:
            version = 1 if old is None else old.version + 1
        run = ParkedRun(
            run_id=run_id,
            blob=bytes(blob),
            meta=detached,
            saved_at=time.time(),
            version=version,
            revision=1 if old is None else old.revision + 1,
            owner=owner,
            lease_expires_at=lease_expires_at,
        )
        self._put_run(session_id, run)
        return version

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        self._ensure_open()
        return self._runs.get(session_id, {}).get(run_id)

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        self._ensure_open()
        run = self._runs.get(session_id, {}).pop(run_id, None)
        self._waiters.notify((session_id, run_id))
        return run is not None

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        self._ensure_open()
        runs = sorted(self._runs.get(session_id, {}).values(), key=lambda r: r.saved_at)
        return [replace(run, blob=b"") for run in runs]

    # --- leases ---------------------------------------------------------------------------

    async def claim_run(
        self, session_id: str, run_id: str, *, owner: str, lease_seconds: float
    ) -> ClaimedRun | None:
        self._ensure_open()
        seconds = check_claim(owner, lease_seconds)
        run = self._runs.get(session_id, {}).get(run_id)
        now = time.time()
        expiry = None if run is None else expiry_of(run.meta)
        if run is None or not run.claimable(now) or (expiry is not None and expiry <= now):
            return None
        lease = Lease(
            session_id=session_id,
            run_id=run_id,
            owner=owner,
            version=run.version + 1,
            expires_at=now + seconds,
        )
        claimed = self._lease_run(session_id, run, lease, revision=run.revision + 1)
        return ClaimedRun(run=claimed, lease=lease)

    async def renew_lease(self, lease: Lease, *, lease_seconds: float) -> Lease:
        self._ensure_open()
        seconds = check_lease_seconds(lease_seconds)
        run = self._fenced(lease.session_id, lease.run_id, lease.version, lease.owner)
        renewed = replace(lease, expires_at=time.time() + seconds)
        self._runs[lease.session_id][lease.run_id] = replace(
            run, owner=renewed.owner, lease_expires_at=renewed.expires_at
        )
        return renewed

    async def release_run(self, lease: Lease) -> None:
        self._ensure_open()
        run = self._fenced(lease.session_id, lease.run_id, lease.version, lease.owner)
        released = replace(run, owner=None, lease_expires_at=None, revision=run.revision + 1)
        self._put_run(lease.session_id, released)

    async def update_run_meta(
        self, session_id: str, run_id: str, *, version: int, patch: Mapping[str, Any]
    ) -> None:
        self._ensure_open()
        run = self._fenced(session_id, run_id, version)
        meta = json.loads(encode_meta(merge_patch(run.meta, json.loads(encode_meta(patch)))))
        self._put_run(session_id, replace(run, meta=meta, revision=run.revision + 1))

    async def wait_for_change(
        self, session_id: str, run_id: str, *, timeout: float, since: int | None = None
    ) -> bool:
        self._ensure_open()

        async def revision() -> int | None:
            run = self._runs.get(session_id, {}).get(run_id)
            return None if run is None else run.revision

        with self._waiters.registered((session_id, run_id)) as event:
            return await wait_for_revision(
                event=event, revision=revision, since=since, timeout=timeout, poll=_POLL
            )

    async def sweep(self, *, now: float | None = None) -> SweepReport:
        self._ensure_open()
        moment = time.time() if now is None else now
        swept = 0
        for session_id, runs in self._runs.items():
            for run_id, run in list(runs.items()):
                expiry = expiry_of(run.meta)
                if expiry is not None and expiry <= moment and run.claimable(moment):
                    del runs[run_id]
                    self._waiters.notify((session_id, run_id))
                    swept += 1
        expired = [k for k, (_, end) in self._results.items() if end is not None and end <= moment]
        for key in expired:
            del self._results[key]
        return SweepReport(runs=swept, results=len(expired))

    # --- saved results --------------------------------------------------------------------

    async def put_result(
        self, scope: str, result_id: str, json: str, *, expires_at: float | None = None
    ) -> None:
        self._ensure_open()
        self._results[scope, result_id] = (str(json), expires_at)

    async def get_result(self, scope: str, result_id: str) -> str | None:
        self._ensure_open()
        text, end = self._results.get((scope, result_id), (None, None))
        return None if end is not None and end <= time.time() else text

    async def list_results(self, scope: str) -> list[str]:
        self._ensure_open()
        now = time.time()
        return sorted(
            result_id
            for (kept, result_id), (_, end) in self._results.items()
            if kept == scope and (end is None or end > now)
        )

    async def delete_result(self, scope: str, result_id: str) -> bool:
        self._ensure_open()
        return self._results.pop((scope, result_id), None) is not None

    def _fenced(
        self, session_id: str, run_id: str, version: int, owner: str | None = None
    ) -> ParkedRun:
        run = self._runs.get(session_id, {}).get(run_id)
        if run is None or run.version != version or (owner is not None and run.owner != owner):
            raise stale_error(session_id, run_id, version, None if run is None else run.version)
        return run

    def _lease_run(
        self, session_id: str, run: ParkedRun, lease: Lease, *, revision: int
    ) -> ParkedRun:
        leased = replace(
            run,
            version=lease.version,
            owner=lease.owner,
            lease_expires_at=lease.expires_at,
            revision=revision,
        )
        self._put_run(session_id, leased)
        return leased

    def _put_run(self, session_id: str, run: ParkedRun) -> None:
        self._runs.setdefault(session_id, {})[run.run_id] = run
        self._waiters.notify((session_id, run.run_id))

    # --- transcripts and documents --------------------------------------------------------

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        self._ensure_open()
        from .._documents import encode_entries

        encoded = encode_entries(entries)
        if encoded:
            self._transcripts.setdefault(session_id, []).extend(encoded)
            self._updated[session_id] = time.time()
            self._appended(session_id, entries)

    async def append_transcript_fenced(
        self,
        session_id: str,
        entries: Sequence[Mapping[str, Any]],
        *,
        lease: Lease,
        lease_seconds: float,
    ) -> Lease:
        """Renew `lease`, then append (`FencedAppend`): atomic, as neither suspends. (Entries
        refused as bad input leave the lease renewed, which is harmless.)"""
        renewed = await self.renew_lease(lease, lease_seconds=lease_seconds)
        await self.append_transcript(session_id, entries)
        return renewed

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        self._ensure_open()
        return [json.loads(text) for text in self._transcripts.get(session_id, [])]

    async def list_sessions(self) -> list[SessionInfo]:
        self._ensure_open()
        infos = [
            SessionInfo(session_id=sid, updated_at=self._updated[sid], entries=len(entries))
            for sid, entries in self._transcripts.items()
        ]
        return sorted(infos, key=lambda info: (-info.updated_at, info.session_id))

    async def search_transcripts(
        self, tokens: Sequence[str], *, limit: int, sessions: Sequence[str] | None = None
    ) -> TranscriptHits:
        """A bounded scan of this process's transcripts, most recent session first (see
        `_search.py`)."""
        self._ensure_open()
        only = None if sessions is None else set(sessions)
        recent = sorted(self._transcripts, key=lambda sid: (-self._updated[sid], sid))
        chosen = ((sid, self._transcripts[sid]) for sid in recent if only is None or sid in only)
        from ._search import search

        return search(chosen, tuple(tokens), limit)

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        self._ensure_open()
        from .._documents import check_document

        self._documents[ref] = check_document(ref, files)

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        self._ensure_open()
        return self._documents.get(ref, {}).get(path)

    async def close(self) -> None:
        """Drop everything; later calls raise `ClosedError`. Idempotent."""
        self._entries.clear()
        self._runs.clear()
        self._transcripts.clear()
        self._updated.clear()
        self._meta.clear()
        self._documents.clear()
        self._results.clear()
        self._closed = True

    def _ensure_open(self) -> None:
        if self._closed:
            raise ClosedError("This `MemoryStore` is closed; create a new store.")


def _total(entries: Mapping[str, StoredValue]) -> int:
    return sum(value.bytes for value in entries.values())
