"""`SQLiteStore`: the durable `SessionStore`, one SQLite file shared by any number of processes.

The database is created on first use (with its parent directories) in WAL mode, so readers
never block the writer and several processes can share one file. Every write is one
`BEGIN IMMEDIATE` transaction: it takes the file's write lock up front, so concurrent writers
queue (up to `timeout` seconds) instead of failing on a lock upgrade, and `apply`'s total
check sees exactly what it commits on top of.

All `sqlite3` calls run on one worker thread owned by the store, so the event loop never
blocks and the connection is only ever touched by the thread that opened it.

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
from pathlib import Path
from typing import Any, Literal, TypeVar

from ..errors import ClosedError, ConfigurationError
from . import _sqlite_transcripts as transcripts
from ._documents import check_document, encode_entries
from ._errors import TOTAL_MESSAGE, StoreRangeError, StoreUnavailableError
from ._records import ParkedRun, SessionInfo, StoredValue
from ._sqlite_connection import connect
from ._sqlite_connection import write as _write

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")


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
                self._conn = connect(
                    self._path, timeout=self._timeout, synchronous=self._synchronous
                )
            return action(self._conn)
        except sqlite3.Error as exc:
            raise StoreUnavailableError(
                f"Session store {str(self._path)!r} failed: {exc}. Check that the file is "
                "writable and not held by a stuck process, then retry."
            ) from exc

    # --- entries --------------------------------------------------------------------------

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        def action(conn: sqlite3.Connection) -> StoredValue | None:
            row = conn.execute(
                "SELECT json, network_content FROM entries WHERE session_id = ? AND key = ?",
                (session_id, key),
            ).fetchone()
            return None if row is None else StoredValue(json=row[0], network_content=bool(row[1]))

        return await self._run(action)

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        def action(conn: sqlite3.Connection) -> dict[str, StoredValue]:
            rows = conn.execute(
                "SELECT key, json, network_content FROM entries WHERE session_id = ?",
                (session_id,),
            )
            return {
                key: StoredValue(json=text, network_content=bool(net)) for key, text, net in rows
            }

        return await self._run(action)

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        await self.apply(session_id, {key: value})

    async def delete(self, session_id: str, key: str) -> bool:
        def action(conn: sqlite3.Connection) -> bool:
            with _write(conn):
                cursor = conn.execute(
                    "DELETE FROM entries WHERE session_id = ? AND key = ?", (session_id, key)
                )
            return cursor.rowcount > 0

        return await self._run(action)

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        changes = dict(writes)

        def action(conn: sqlite3.Connection) -> None:
            with _write(conn):
                for key, value in changes.items():
                    if value is None:
                        conn.execute(
                            "DELETE FROM entries WHERE session_id = ? AND key = ?",
                            (session_id, key),
                        )
                    else:
                        conn.execute(
                            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
                            (session_id, key, value.json, value.bytes, int(value.network_content)),
                        )
                if max_total_bytes is not None:
                    total = conn.execute(
                        "SELECT COALESCE(SUM(bytes), 0) FROM entries WHERE session_id = ?",
                        (session_id,),
                    ).fetchone()[0]
                    if total > max_total_bytes:
                        raise StoreRangeError(TOTAL_MESSAGE)

        await self._run(action)

    # --- parked runs ----------------------------------------------------------------------

    async def save_run(
        self, session_id: str, run_id: str, blob: bytes, meta: Mapping[str, Any]
    ) -> None:
        meta_json = json.dumps(dict(meta), ensure_ascii=False, separators=(",", ":"))
        data = bytes(blob)

        def action(conn: sqlite3.Connection) -> None:
            with _write(conn):
                conn.execute(
                    "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?)",
                    (session_id, run_id, data, meta_json, time.time()),
                )

        await self._run(action)

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        def action(conn: sqlite3.Connection) -> ParkedRun | None:
            row = conn.execute(
                "SELECT run_id, blob, meta, saved_at FROM runs WHERE session_id = ? AND run_id = ?",
                (session_id, run_id),
            ).fetchone()
            return None if row is None else _run_from_row(row)

        return await self._run(action)

    async def take_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        def action(conn: sqlite3.Connection) -> ParkedRun | None:
            with _write(conn):
                row = conn.execute(
                    "SELECT run_id, blob, meta, saved_at FROM runs "
                    "WHERE session_id = ? AND run_id = ?",
                    (session_id, run_id),
                ).fetchone()
                if row is None:
                    return None
                conn.execute(
                    "DELETE FROM runs WHERE session_id = ? AND run_id = ?", (session_id, run_id)
                )
            return _run_from_row(row)

        return await self._run(action)

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        def action(conn: sqlite3.Connection) -> bool:
            with _write(conn):
                cursor = conn.execute(
                    "DELETE FROM runs WHERE session_id = ? AND run_id = ?", (session_id, run_id)
                )
            return cursor.rowcount > 0

        return await self._run(action)

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        def action(conn: sqlite3.Connection) -> list[ParkedRun]:
            rows = conn.execute(
                "SELECT run_id, X'', meta, saved_at FROM runs WHERE session_id = ? "
                "ORDER BY saved_at, run_id",
                (session_id,),
            )
            return [_run_from_row(row) for row in rows]

        return await self._run(action)

    # --- transcripts and documents --------------------------------------------------------

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        encoded = encode_entries(entries)
        if encoded:
            action = functools.partial(
                transcripts.append, session_id=session_id, entries=encoded, now=time.time()
            )
            await self._run(action)

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        return await self._run(functools.partial(transcripts.read, session_id=session_id))

    async def list_sessions(self) -> list[SessionInfo]:
        return await self._run(transcripts.sessions)

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


def _run_from_row(row: tuple[Any, ...]) -> ParkedRun:
    run_id, blob, meta, saved_at = row
    return ParkedRun(run_id=run_id, blob=bytes(blob), meta=json.loads(meta), saved_at=saved_at)
