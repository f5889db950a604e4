"""`PostgresStore`'s entries, transcripts and documents, as functions of one connection.

Each runs inside the caller's transaction. `apply` and `put_document` first take a
transaction-scoped advisory lock on their session (document), so writers of one session
queue and the 1 MiB re-check sees every earlier commit; transcript appends queue on their
`sessions` row, whose upsert hands out the sequence numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from .. import _directory_sql as directory_sql
from .. import _sql as sql
from .._directory import default_title
from .._errors import TOTAL_MESSAGE, StoreRangeError
from .._leases import stale_error
from .._records import Lease, SessionInfo, StoredValue, SweepReport

if TYPE_CHECKING:
    from psycopg import AsyncConnection

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = [
    "append",
    "apply",
    "fenced",
    "put_document",
    "put_new",
    "read",
    "renew",
    "result_ids",
    "sessions",
    "sweep",
]

_pg = sql.for_postgres
_ENTRY_LOCK: Final = 0x656E7472  # "entr"
_DOCUMENT_LOCK: Final = 0x646F6375  # "docu"


async def fenced(conn: Connection, key: tuple[str, str], version: int, rows: int) -> None:
    """`StaleRunError` naming the run's version now when a fenced statement changed no row."""
    if rows == 0:
        row = await (await conn.execute(_pg(sql.RUN_VERSION), key)).fetchone()
        raise stale_error(*key, version, None if row is None else int(row[0]))


async def renew(conn: Connection, lease: Lease, until: float) -> None:
    """The fenced renewal of `lease` until `until` (`StaleRunError` when it was taken)."""
    key = (lease.session_id, lease.run_id)
    cursor = await conn.execute(_pg(sql.RENEW_LEASE), (until, *key, lease.version, lease.owner))
    await fenced(conn, key, lease.version, cursor.rowcount)


async def _lock(conn: Connection, kind: int, name: str) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (kind, name))


async def apply(
    conn: Connection,
    lock_name: str,
    session_id: str,
    changes: Mapping[str, StoredValue | None],
    max_total_bytes: int | None,
) -> None:
    """One cell's writes, then the total re-check."""
    await _lock(conn, _ENTRY_LOCK, lock_name)
    for key, value in changes.items():
        if value is None:
            await conn.execute(_pg(sql.DELETE_ENTRY), (session_id, key))
        else:
            params = (session_id, key, value.json, value.bytes, int(value.network_content))
            await conn.execute(_pg(sql.UPSERT_ENTRY), params)
    if max_total_bytes is not None:
        row = await (await conn.execute(_pg(sql.ENTRY_TOTAL), (session_id,))).fetchone()
        if row is not None and int(row[0]) > max_total_bytes:
            raise StoreRangeError(TOTAL_MESSAGE)


async def put_new(conn: Connection, session_id: str, key: str, value: StoredValue) -> bool:
    """Insert one entry unless the key has one (`FirstWriter.put_new`; one statement, so
    concurrent inserts queue on the primary key and exactly one succeeds)."""
    params = (session_id, key, value.json, value.bytes, int(value.network_content))
    return (await conn.execute(_pg(sql.INSERT_NEW_ENTRY), params)).rowcount > 0


async def append(
    conn: Connection,
    session_id: str,
    encoded: Sequence[str],
    now: float,
    entries: Sequence[Mapping[str, Any]],
) -> None:
    """Append encoded `entries` after the session's last one, bump its summary and give it
    a default title when it has none yet (`_directory.default_title`)."""
    params = (session_id, now, len(encoded), len(encoded))
    row = await (await conn.execute(_pg(sql.UPSERT_SESSION), params)).fetchone()
    first = (0 if row is None else int(row[0])) - len(encoded)
    async with conn.cursor() as cursor:
        await cursor.executemany(
            _pg(sql.INSERT_TRANSCRIPT),
            [(session_id, first + i, text) for i, text in enumerate(encoded)],
        )
    untitled = row is not None and row[1] is None  # a titled session needs no UPDATE
    if untitled and (title := default_title(entries)) is not None:
        await conn.execute(_pg(directory_sql.DEFAULT_TITLE), (title, session_id))


async def read(conn: Connection, session_id: str) -> list[dict[str, Any]]:
    rows = await (await conn.execute(_pg(sql.TRANSCRIPT), (session_id,))).fetchall()
    return [json.loads(text) for (text,) in rows]


async def sessions(conn: Connection) -> list[SessionInfo]:
    rows = await (await conn.execute(_pg(sql.SESSIONS))).fetchall()
    return [SessionInfo(session_id=s, updated_at=u, entries=n) for s, u, n in rows]


async def put_document(
    conn: Connection, lock_name: str, ref: str, files: Mapping[str, bytes]
) -> None:
    """Replace every file of document `ref`."""
    await _lock(conn, _DOCUMENT_LOCK, lock_name)
    await conn.execute(_pg(sql.DROP_DOCUMENT), (ref,))
    async with conn.cursor() as cursor:
        await cursor.executemany(
            _pg(sql.INSERT_DOCUMENT_FILE), [(ref, path, data) for path, data in files.items()]
        )


async def result_ids(conn: Connection, scope: str, now: float) -> list[str]:
    """The ids of a scope's saved results that have not expired, sorted."""
    rows = await (await conn.execute(_pg(sql.LIST_RESULTS), (scope, now))).fetchall()
    return [str(row[0]) for row in rows]


async def sweep(conn: Connection, moment: float) -> SweepReport:
    """Delete the expired runs no live lease holds and the expired results (in a transaction)."""
    rows = await (await conn.execute(_pg(sql.SWEEP_RUNS), (moment, moment))).fetchall()
    results = (await conn.execute(_pg(sql.SWEEP_RESULTS), (moment,))).rowcount
    return SweepReport(runs=len(rows), results=results)
