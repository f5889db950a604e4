"""`PostgresStore`: the `SessionStore` for many workers on many hosts sharing one PostgreSQL.

Needs psycopg 3 and its pool (the `[postgres]` extra). Nothing connects until the first call,
which opens an async pool and brings the schema up to date (`_schema`). Every write is
one statement or one short transaction; the lease rules are single compare-and-set statements
shared with SQLite (`_sql`), so of two workers claiming one run exactly one gets it. `apply`
and `put_document` serialise per session (per document) with advisory locks, so the 1 MiB
re-check sees every earlier commit. Wake-ups use `LISTEN`/`NOTIFY` (`_listener`),
with polling as a safety net. Lease expiry compares each worker's clock: keep hosts in sync.

Threat model: the database holds session data and snapshot bytes in clear; give the role
clawcell connects as access to its schema only, and use TLS (`sslmode=verify-full` in the
DSN) across hosts. Database errors surface as `StoreUnavailableError` with the DSN's
password never shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, LiteralString

from ...errors import ClosedError, ConfigurationError
from .. import _sql as sql
from .._documents import check_document, encode_entries
from .._leases import check_claim, check_lease_seconds, stale_error
from .._records import ClaimedRun, Lease, ParkedRun, SessionInfo, StoredValue, SweepReport
from .._runmeta import encode_meta, expiry_of, merge_patch
from .._search import TranscriptHits
from .._waiting import Poll, Waiters, wait_for_revision
from . import _rows as rows
from . import _search as transcript_search
from ._directory import PostgresDirectory
from ._listener import Listener
from ._pool import LoopGuard
from ._schema import SCHEMA_VERSION, channel_of, check_schema_name, migrate
from ._translate import require_driver, translated

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = ["PostgresStore"]

_pg = sql.for_postgres
_RETRY: Final = " Check that the server is reachable and the role may use the schema, then retry."
# NOTIFY wakes waiters at once; the poll only covers a lost LISTEN connection.
_POLL: Final = Poll(first=0.5, cap=3.0)


class PostgresStore(PostgresDirectory):
    """A `SessionStore` in PostgreSQL; see the protocol for each method's contract.

    Args:
        dsn: A libpq connection string or URL (`postgresql://user@host/db`).
        schema: The PostgreSQL schema (namespace) holding clawcell's tables; created on
            first use.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool opens at most.
        timeout: Seconds to wait for a connection before `StoreUnavailableError`.

    Use it as an async context manager or call `close()`; it fails clearly once closed.
    It belongs to the event loop of its first call, and closes as that loop ends.

    Raises:
        ConfigurationError: when psycopg is missing, or for a bad `schema` or pool size.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "clawcell",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
    ) -> None:
        require_driver()
        if not 1 <= min_size <= max_size:
            raise ConfigurationError(
                f"pool sizes need 1 ≤ `min_size` ≤ `max_size`, got {min_size!r} and {max_size!r}."
            )
        if timeout <= 0:
            raise ConfigurationError(f"`timeout` must be positive, got {timeout!r}.")
        self._dsn = dsn
        self._schema = check_schema_name(schema)
        self._sizes = (min_size, max_size)
        self._timeout = timeout
        self._pool: AsyncConnectionPool[Connection] | None = None
        self._opening = asyncio.Lock()
        self._found_version = 0
        self._waiters = Waiters()
        self._listener = Listener(dsn, channel_of(self._schema), self._waiters)
        self._guard: LoopGuard | None = None
        self._closed = False

    @property
    def schema(self) -> str:
        """The PostgreSQL schema holding the tables."""
        return self._schema

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def upgrade(self) -> tuple[int, int]:
        """Connect, upgrading the schema; `(version found, version now)`."""
        async with self._connection():
            pass
        return self._found_version, SCHEMA_VERSION

    # --- plumbing -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(
                f"This `PostgresStore` ({self._schema!r}) is closed (by `close()`, or as the "
                "event loop of its first call ended); open a new store."
            )

    async def _open(self) -> AsyncConnectionPool[Connection]:
        from psycopg import AsyncConnection
        from psycopg_pool import AsyncConnectionPool

        async with self._opening:
            self._check_open()
            if self._pool is None:
                pool = AsyncConnectionPool(
                    self._dsn,
                    connection_class=AsyncConnection[tuple[Any, ...]],
                    kwargs={"autocommit": True, "options": f"-c search_path={self._schema}"},
                    min_size=self._sizes[0],
                    max_size=self._sizes[1],
                    timeout=self._timeout,
                    open=False,
                )
                try:
                    await pool.open(wait=True, timeout=self._timeout)
                    async with pool.connection() as conn:
                        self._found_version = await migrate(conn, self._schema)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
                self._guard = LoopGuard(self.close, name=f"clawcell-postgres {self._schema}")
            return self._pool

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncGenerator[Connection]:
        import psycopg

        self._check_open()
        try:
            pool = await self._open()
            async with pool.connection() as conn:
                yield conn
        except (psycopg.Error, UnicodeEncodeError) as exc:
            where = f"Session store PostgreSQL schema {self._schema!r}"
            raise translated(exc, where, _RETRY) from exc

    async def _one(self, statement: LiteralString, params: Sequence[Any]) -> tuple[Any, ...] | None:
        async with self._connection() as conn:
            cursor = await conn.execute(statement, params)
            return await cursor.fetchone()

    async def _count(self, statement: LiteralString, params: Sequence[Any]) -> int:
        async with self._connection() as conn:
            return (await conn.execute(statement, params)).rowcount

    # --- entries --------------------------------------------------------------------------

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        row = await self._one(_pg(sql.ENTRY), (session_id, key))
        return None if row is None else StoredValue(json=row[0], network_content=bool(row[1]))

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        async with self._connection() as conn:
            rows = await (await conn.execute(_pg(sql.ENTRIES), (session_id,))).fetchall()
        return {k: StoredValue(json=text, network_content=bool(net)) for k, text, net in rows}

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        await self.apply(session_id, {key: value})

    async def put_new(self, session_id: str, key: str, value: StoredValue) -> bool:
        async with self._connection() as conn:
            return await rows.put_new(conn, session_id, key, value)

    async def delete(self, session_id: str, key: str) -> bool:
        return await self._count(_pg(sql.DELETE_ENTRY), (session_id, key)) > 0

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        changes = dict(writes)
        async with self._connection() as conn, conn.transaction():
            await rows.apply(
                conn, self._lock_name(session_id), session_id, changes, max_total_bytes
            )

    def _lock_name(self, name: str) -> str:
        return f"{self._schema}:{name}"

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
        text, key, now = encode_meta(meta), (session_id, run_id), time.time()
        expiry = expiry_of(json.loads(text))
        async with self._connection() as conn:
            if expected_version is None:
                params = (*key, bytes(blob), text, now, expiry)
                row = await (await conn.execute(_pg(sql.SAVE_RUN), params)).fetchone()
                return 0 if row is None else int(row[0])
            params = (bytes(blob), text, now, expiry, *key, expected_version)
            cursor = await conn.execute(_pg(sql.SAVE_RUN_FENCED), params)
            await rows.fenced(conn, key, expected_version, cursor.rowcount)
        return expected_version

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        row = await self._one(_pg(sql.LOAD_RUN), (session_id, run_id))
        return None if row is None else sql.run_from_row(row)

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        return await self._count(_pg(sql.DELETE_RUN), (session_id, run_id)) > 0

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        async with self._connection() as conn:
            rows = await (await conn.execute(_pg(sql.LIST_RUNS), (session_id,))).fetchall()
        return sql.intact_runs(rows)

    # --- leases ---------------------------------------------------------------------------

    async def claim_run(
        self, session_id: str, run_id: str, *, owner: str, lease_seconds: float
    ) -> ClaimedRun | None:
        seconds, now = check_claim(owner, lease_seconds), time.time()
        params = (owner, now + seconds, session_id, run_id, now, now)
        row = await self._one(_pg(sql.CLAIM_RUN), params)
        if row is None:
            return None
        run = sql.run_from_row(row)
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
        async with self._connection() as conn:
            await rows.renew(conn, lease, until)
        return replace(lease, expires_at=until)

    async def release_run(self, lease: Lease) -> None:
        key = (lease.session_id, lease.run_id)
        async with self._connection() as conn:
            params = (*key, lease.version, lease.owner)
            cursor = await conn.execute(_pg(sql.RELEASE_RUN), params)
            await rows.fenced(conn, key, lease.version, cursor.rowcount)

    async def update_run_meta(
        self, session_id: str, run_id: str, *, version: int, patch: Mapping[str, Any]
    ) -> None:
        key, detached = (session_id, run_id), json.loads(encode_meta(patch))
        async with self._connection() as conn, conn.transaction():
            row = await (await conn.execute(_pg(sql.LOCK_RUN_META), key)).fetchone()
            if row is None or int(row[1]) != version:
                raise stale_error(*key, version, None if row is None else int(row[1]))
            meta = merge_patch(sql.meta_of(row[0]), detached)
            params = (encode_meta(meta), expiry_of(meta), *key, version)
            await conn.execute(_pg(sql.UPDATE_RUN_META), params)

    async def wait_for_change(
        self, session_id: str, run_id: str, *, timeout: float, since: int | None = None
    ) -> bool:
        import psycopg

        key = (session_id, run_id)

        async def revision() -> int | None:
            row = await self._one(_pg(sql.RUN_REVISION), key)
            return None if row is None else int(row[0])

        self._check_open()
        with self._waiters.registered(key) as event:
            # Without a LISTEN connection the poll still finds the change, only later.
            with contextlib.suppress(psycopg.Error):
                await self._listener.ensure_listening()
            return await wait_for_revision(
                event=event, revision=revision, since=since, timeout=timeout, poll=_POLL
            )

    async def sweep(self, *, now: float | None = None) -> SweepReport:
        async with self._connection() as conn, conn.transaction():
            return await rows.sweep(conn, time.time() if now is None else now)

    # --- saved results --------------------------------------------------------------------

    async def put_result(
        self, scope: str, result_id: str, json: str, *, expires_at: float | None = None
    ) -> None:
        await self._count(_pg(sql.PUT_RESULT), (scope, result_id, json, expires_at))

    async def get_result(self, scope: str, result_id: str) -> str | None:
        row = await self._one(_pg(sql.GET_RESULT), (scope, result_id, time.time()))
        return None if row is None else str(row[0])

    async def list_results(self, scope: str) -> list[str]:
        async with self._connection() as conn:
            return await rows.result_ids(conn, scope, time.time())

    async def delete_result(self, scope: str, result_id: str) -> bool:
        return await self._count(_pg(sql.DELETE_RESULT), (scope, result_id)) > 0

    # --- transcripts and documents --------------------------------------------------------

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        encoded = encode_entries(entries)
        if encoded:
            async with self._connection() as conn, conn.transaction():
                await rows.append(conn, session_id, encoded, time.time(), entries)

    async def append_transcript_fenced(
        self,
        session_id: str,
        entries: Sequence[Mapping[str, Any]],
        *,
        lease: Lease,
        lease_seconds: float,
    ) -> Lease:
        """Renew `lease` and append `entries` in one transaction (`FencedAppend`): a turn's
        append commits once, and not at all once its lease was taken (`StaleRunError`)."""
        until, encoded = time.time() + check_lease_seconds(lease_seconds), encode_entries(entries)
        async with self._connection() as conn, conn.transaction():
            await rows.renew(conn, lease, until)
            if encoded:
                await rows.append(conn, session_id, encoded, time.time(), entries)
        return replace(lease, expires_at=until)

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        async with self._connection() as conn:
            return await rows.read(conn, session_id)

    async def list_sessions(self) -> list[SessionInfo]:
        async with self._connection() as conn:
            return await rows.sessions(conn)

    async def search_transcripts(
        self, tokens: Sequence[str], *, limit: int, sessions: Sequence[str] | None = None
    ) -> TranscriptHits:
        """Full-text search of transcript text (see `_search.py`)."""
        async with self._connection() as conn:
            return await transcript_search.search(conn, tuple(tokens), limit, sessions)

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        checked = check_document(ref, files)
        async with self._connection() as conn, conn.transaction():
            await rows.put_document(conn, self._lock_name(ref), ref, checked)

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        row = await self._one(_pg(sql.DOCUMENT_FILE), (ref, path))
        return None if row is None else bytes(row[0])

    async def close(self) -> None:
        """Close the listener and the pool. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._guard is not None:
            self._guard.release()
        await self._listener.close()
        async with self._opening:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
