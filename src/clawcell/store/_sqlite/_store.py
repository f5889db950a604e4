"""`SQLiteStore`: the durable `SessionStore`, one SQLite file shared by any number of processes.

The database is created on first use (with its parent directories) in WAL mode, so readers
never block the writer and several processes can share one file. Every write is one
`BEGIN IMMEDIATE` transaction: it takes the file's write lock up front, so concurrent writers
queue (up to `timeout` seconds) instead of failing on a lock upgrade, and `apply`'s total
check sees exactly what it commits on top of.

All `sqlite3` calls run on one worker thread owned by the store, so the event loop never
blocks and the connection is only ever touched by the thread that opened it. The schema is
versioned and upgraded on open (`_connection`).

Leases and fencing work across processes sharing the file (each rule is one statement in a
`BEGIN IMMEDIATE` transaction). `wait_for_change` wakes at once for writes made through the
same store object and polls, with backoff, for writes by other processes.

Durability: with the default `synchronous="NORMAL"` a committed transaction survives the
process being killed (SIGKILL included); only a power loss or OS crash can roll back the last
transactions. `synchronous="FULL"` also covers those at the cost of an fsync per commit.

Threat model: the file holds session data and snapshot bytes in clear; protect it with file
permissions like any other session transcript. Snapshot blobs are stored verbatim; checking
their header (magic, version, wasm hash) is the continuation code's job.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from ...errors import ClosedError, ConfigurationError, InputError
from .._directory import SessionPage, SessionRecord, check_page, check_title, default_title
from .._documents import check_document, encode_entries
from .._errors import UNSTORABLE_MESSAGE, StoreUnavailableError
from .._leases import check_claim, check_lease_seconds
from .._records import ClaimedRun, Lease, ParkedRun, SessionInfo, StoredValue, SweepReport
from .._runmeta import encode_meta
from .._search import TranscriptHits
from .._waiting import Poll, Waiters, wait_for_revision
from . import _directory as directory
from . import _entries as entries
from . import _parked_runs as runs
from . import _search as transcript_search
from . import _transcripts as transcripts
from ._connection import SCHEMA_VERSION, connect

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")
# Other processes' writes are seen by polling: 20 ms at first, doubling up to half a second.
_POLL: Final = Poll(first=0.02, cap=0.5)


class SQLiteStore:
    """A `SessionStore` in one SQLite file; see the protocol for each method's contract.

    Args:
        path: The database file; it and its parent directories are created on first use.
        timeout: Seconds a write waits for another process's write lock before failing.
        synchronous: SQLite's `synchronous` setting (see the module docstring).

    Use it as an async context manager or call `close()`; it fails clearly once closed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ConfigurationError(
                f'`synchronous` must be "NORMAL" or "FULL", got {synchronous!r}.'
            )
        if timeout <= 0:
            raise ConfigurationError(f"`timeout` must be positive, got {timeout!r}.")
        self._path = Path(path)
        self._timeout = timeout
        self._synchronous = synchronous
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawcell-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._found_version = 0
        self._waiters = Waiters()
        self._closed = False
        self._pid = os.getpid()

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def upgrade(self) -> tuple[int, int]:
        """Open the file, upgrading its schema; `(version found, version now)`."""
        await self._run(lambda _: None)
        return self._found_version, SCHEMA_VERSION

    # --- plumbing -------------------------------------------------------------------------

    async def _run(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise ClosedError(f"`SQLiteStore({str(self._path)!r})` is closed; open a new store.")
        if self._pid != os.getpid():
            # A forked child inherits neither the worker thread nor a usable connection.
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawcell-sqlite")
            self._conn, self._pid = None, os.getpid()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._call, action)

    def _call(self, action: Callable[[sqlite3.Connection], _T]) -> _T:
        try:
            if self._conn is None:
                self._conn, self._found_version = connect(
                    self._path, timeout=self._timeout, synchronous=self._synchronous
                )
            return action(self._conn)
        except UnicodeEncodeError as exc:
            where = f"Session store {str(self._path)!r}"
            raise InputError(UNSTORABLE_MESSAGE.format(where=where, exc=exc)) from exc
        except sqlite3.Error as exc:
            raise StoreUnavailableError(
                f"Session store {str(self._path)!r} failed: {exc}. Check that the file is "
                "writable and not held by a stuck process, then retry."
            ) from exc

    async def _run_write(
        self, key: tuple[str, str], action: Callable[[sqlite3.Connection], _T]
    ) -> _T:
        try:
            return await self._run(action)
        finally:
            self._waiters.notify(key)

    # --- entries --------------------------------------------------------------------------

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        return await self._run(functools.partial(entries.get, session_id=session_id, key=key))

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        return await self._run(functools.partial(entries.items, session_id=session_id))

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        await self.apply(session_id, {key: value})

    async def put_new(self, session_id: str, key: str, value: StoredValue) -> bool:
        """Set one entry unless the key has one; whether this call wrote it (`FirstWriter`)."""
        action = functools.partial(entries.put_new, session_id=session_id, key=key, value=value)
        return await self._run(action)

    async def delete(self, session_id: str, key: str) -> bool:
        return await self._run(functools.partial(entries.delete, session_id=session_id, key=key))

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        action = functools.partial(
            entries.apply,
            session_id=session_id,
            changes=dict(writes),
            max_total_bytes=max_total_bytes,
        )
        await self._run(action)

    # --- parked runs ----------------------------------------------------------------------

    async def save_run(
        self,
        session_id: str,
        run_id: str,
        blob: bytes,
        meta: Mapping[str, Any],
        *,
        expected_version: int | None = None,
    ) -> int:
        key, text, data = (session_id, run_id), encode_meta(meta), bytes(blob)
        if expected_version is None:
            action = functools.partial(runs.save, key=key, blob=data, meta=text, now=time.time())
        else:
            action = functools.partial(
                runs.save_fenced,
                key=key,
                blob=data,
                meta=text,
                now=time.time(),
                version=expected_version,
            )
        return await self._run_write(key, action)

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        return await self._run(functools.partial(runs.load, key=(session_id, run_id)))

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        key = (session_id, run_id)
        return await self._run_write(key, functools.partial(runs.delete, key=key))

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        return await self._run(functools.partial(runs.list_runs, session_id=session_id))

    # --- leases ---------------------------------------------------------------------------

    async def claim_run(
        self, session_id: str, run_id: str, *, owner: str, lease_seconds: float
    ) -> ClaimedRun | None:
        seconds, now, key = check_claim(owner, lease_seconds), time.time(), (session_id, run_id)
        action = functools.partial(runs.claim, key=key, owner=owner, until=now + seconds, now=now)
        run = await self._run_write(key, action)
        if run is None:
            return None
        lease = Lease(
            session_id=session_id,
            run_id=run_id,
            owner=owner,
            version=run.version,
            expires_at=now + seconds,
        )
        return ClaimedRun(run=run, lease=lease)

    async def renew_lease(self, lease: Lease, *, lease_seconds: float) -> Lease:
        until = time.time() + check_lease_seconds(lease_seconds)
        action = functools.partial(
            runs.renew,
            key=(lease.session_id, lease.run_id),
            owner=lease.owner,
            version=lease.version,
            until=until,
        )
        await self._run(action)
        return replace(lease, expires_at=until)

    async def release_run(self, lease: Lease) -> None:
        key = (lease.session_id, lease.run_id)
        action = functools.partial(runs.release, key=key, owner=lease.owner, version=lease.version)
        await self._run_write(key, action)

    async def update_run_meta(
        self, session_id: str, run_id: str, *, version: int, patch: Mapping[str, Any]
    ) -> None:
        key, detached = (session_id, run_id), json.loads(encode_meta(patch))
        action = functools.partial(runs.update_meta, key=key, version=version, patch=detached)
        await self._run_write(key, action)

    async def wait_for_change(
        self, session_id: str, run_id: str, *, timeout: float, since: int | None = None
    ) -> bool:
        key = (session_id, run_id)

        async def revision() -> int | None:
            return await self._run(functools.partial(runs.revision, key=key))

        with self._waiters.registered(key) as event:
            return await wait_for_revision(
                event=event, revision=revision, since=since, timeout=timeout, poll=_POLL
            )

    async def sweep(self, *, now: float | None = None) -> SweepReport:
        moment = time.time() if now is None else now
        swept, results = await self._run(functools.partial(runs.sweep, now=moment))
        for key in swept:
            self._waiters.notify(key)
        return SweepReport(runs=len(swept), results=results)

    # --- saved results --------------------------------------------------------------------

    async def put_result(
        self, scope: str, result_id: str, json: str, *, expires_at: float | None = None
    ) -> None:
        action = functools.partial(
            entries.put_result, key=(scope, result_id), text=json, expires_at=expires_at
        )
        await self._run(action)

    async def get_result(self, scope: str, result_id: str) -> str | None:
        action = functools.partial(entries.get_result, key=(scope, result_id), now=time.time())
        return await self._run(action)

    async def list_results(self, scope: str) -> list[str]:
        action = functools.partial(entries.list_results, scope=scope, now=time.time())
        return await self._run(action)

    async def delete_result(self, scope: str, result_id: str) -> bool:
        return await self._run(functools.partial(entries.delete_result, key=(scope, result_id)))

    # --- transcripts and documents --------------------------------------------------------

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        encoded = encode_entries(entries)
        if encoded:
            action = functools.partial(
                transcripts.append,
                session_id=session_id,
                entries=encoded,
                now=time.time(),
                title=default_title(entries),
            )
            await self._run(action)

    async def append_transcript_fenced(
        self,
        session_id: str,
        entries: Sequence[Mapping[str, Any]],
        *,
        lease: Lease,
        lease_seconds: float,
    ) -> Lease:
        """Renew `lease` and append `entries` in one write transaction (`FencedAppend`)."""
        until = time.time() + check_lease_seconds(lease_seconds)
        key = (lease.session_id, lease.run_id)
        fence = functools.partial(
            runs.fence, key=key, owner=lease.owner, version=lease.version, until=until
        )
        action = functools.partial(
            transcripts.append, session_id=session_id, entries=encode_entries(entries),
            now=time.time(), title=default_title(entries), fence=fence
        )  # fmt: skip
        await self._run(action)
        return replace(lease, expires_at=until)

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        return await self._run(functools.partial(transcripts.read, session_id=session_id))

    async def list_sessions(self) -> list[SessionInfo]:
        return await self._run(transcripts.sessions)

    async def search_transcripts(
        self, tokens: Sequence[str], *, limit: int, sessions: Sequence[str] | None = None
    ) -> TranscriptHits:
        """Full-text search of transcript text (FTS5; see `_search.py`)."""
        chosen, only = tuple(tokens), None if sessions is None else list(sessions)
        return await self._run(lambda conn: transcript_search.search(conn, chosen, limit, only))

    # --- the session list (`SessionDirectory`) ---------------------------------------------

    async def session_page(
        self, *, query: str = "", archived: bool = False, limit: int = 50, after: str | None = None
    ) -> SessionPage:
        count = check_page(limit)
        return await self._run(lambda conn: directory.page(conn, query, archived, count, after))

    async def session_record(self, session_id: str) -> SessionRecord | None:
        return await self._run(functools.partial(directory.record, session_id=session_id))

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> SessionRecord | None:
        name = None if title is None else check_title(title)
        return await self._run(
            lambda conn: directory.update(conn, session_id, name, pinned, archived)
        )

    async def delete_session(self, session_id: str) -> bool:
        return await self._run(functools.partial(directory.delete, session_id=session_id))

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        checked = check_document(ref, files)
        await self._run(functools.partial(transcripts.put_document, ref=ref, files=checked))

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        return await self._run(functools.partial(transcripts.document_file, ref=ref, path=path))

    async def close(self) -> None:
        """Close the connection and the worker thread. Idempotent."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._disconnect)
        self._executor.shutdown(wait=True)

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
