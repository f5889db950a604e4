"""`SQLiteStore`'s parked runs and leases, as functions of one open connection.

Each runs on the store's worker thread; every write is one `BEGIN IMMEDIATE` transaction, so
a compare-and-set and the read that explains its failure see the same database.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from .. import _sql as sql
from .._leases import stale_error
from .._records import ParkedRun
from .._runmeta import encode_meta, expiry_of, merge_patch
from ._connection import write

__all__ = [
    "claim",
    "delete",
    "list_runs",
    "load",
    "release",
    "renew",
    "revision",
    "save",
    "save_fenced",
    "sweep",
    "update_meta",
]


def save(conn: sqlite3.Connection, key: tuple[str, str], blob: bytes, meta: str, now: float) -> int:
    """Unfenced insert or replace; the run's new version."""
    expiry = expiry_of(json.loads(meta))
    with write(conn):
        (row,) = conn.execute(sql.SAVE_RUN, (*key, blob, meta, now, expiry)).fetchall()
    return int(row[0])


def save_fenced(
    conn: sqlite3.Connection,
    key: tuple[str, str],
    *,
    blob: bytes,
    meta: str,
    now: float,
    version: int,
) -> int:
    """Replace the snapshot while the version is still `version`."""
    expiry = expiry_of(json.loads(meta))
    with write(conn):
        cursor = conn.execute(sql.SAVE_RUN_FENCED, (blob, meta, now, expiry, *key, version))
        _check_fenced(conn, key, version, cursor.rowcount)
    return version


def load(conn: sqlite3.Connection, key: tuple[str, str]) -> ParkedRun | None:
    row = conn.execute(sql.LOAD_RUN, key).fetchone()
    return None if row is None else sql.run_from_row(row)


def delete(conn: sqlite3.Connection, key: tuple[str, str]) -> bool:
    with write(conn):
        return conn.execute(sql.DELETE_RUN, key).rowcount > 0


def list_runs(conn: sqlite3.Connection, session_id: str) -> list[ParkedRun]:
    return sql.intact_runs(conn.execute(sql.LIST_RUNS, (session_id,)))


def revision(conn: sqlite3.Connection, key: tuple[str, str]) -> int | None:
    row = conn.execute(sql.RUN_REVISION, key).fetchone()
    return None if row is None else int(row[0])


def claim(
    conn: sqlite3.Connection, key: tuple[str, str], owner: str, until: float, now: float
) -> ParkedRun | None:
    """Lease the run to `owner` until `until` if it is claimable at `now`."""
    with write(conn):
        rows = conn.execute(sql.CLAIM_RUN, (owner, until, *key, now, now)).fetchall()
    return sql.run_from_row(rows[0]) if rows else None


def renew(
    conn: sqlite3.Connection, key: tuple[str, str], owner: str, version: int, until: float
) -> None:
    with write(conn):
        fence(conn, key, owner, version, until)


def fence(
    conn: sqlite3.Connection, key: tuple[str, str], owner: str, version: int, until: float
) -> None:
    """The fenced renewal, inside the caller's write transaction (`StaleRunError` when the
    lease was taken; the caller's transaction then rolls back)."""
    cursor = conn.execute(sql.RENEW_LEASE, (until, *key, version, owner))
    _check_fenced(conn, key, version, cursor.rowcount)


def release(conn: sqlite3.Connection, key: tuple[str, str], owner: str, version: int) -> None:
    with write(conn):
        cursor = conn.execute(sql.RELEASE_RUN, (*key, version, owner))
        _check_fenced(conn, key, version, cursor.rowcount)


def update_meta(
    conn: sqlite3.Connection, key: tuple[str, str], version: int, patch: dict[str, Any]
) -> None:
    with write(conn):
        row = conn.execute(sql.LOAD_RUN, key).fetchone()
        if row is None or row[4] != version:
            raise stale_error(*key, version, None if row is None else int(row[4]))
        meta = merge_patch(sql.meta_of(row[2]), patch)
        conn.execute(sql.UPDATE_RUN_META, (encode_meta(meta), expiry_of(meta), *key, version))


def sweep(conn: sqlite3.Connection, now: float) -> tuple[list[tuple[str, str]], int]:
    """Delete expired, unleased runs and expired results; the runs' keys, the results' count."""
    with write(conn):
        runs = [(s, r) for s, r in conn.execute(sql.SWEEP_RUNS, (now, now)).fetchall()]
        results = conn.execute(sql.SWEEP_RESULTS, (now,)).rowcount
    return runs, results


def _check_fenced(conn: sqlite3.Connection, key: tuple[str, str], version: int, rows: int) -> None:
    if rows == 0:
        row = conn.execute(sql.RUN_VERSION, key).fetchone()
        raise stale_error(*key, version, None if row is None else int(row[0]))
