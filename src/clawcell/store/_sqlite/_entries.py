"""`SQLiteStore`'s session-store entries and saved results, as functions of one connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from .. import _sql as sql
from .._errors import TOTAL_MESSAGE, StoreRangeError
from .._records import StoredValue
from ._connection import write

__all__ = [
    "apply",
    "delete",
    "delete_result",
    "get",
    "get_result",
    "items",
    "list_results",
    "put_new",
    "put_result",
]


def get(conn: sqlite3.Connection, session_id: str, key: str) -> StoredValue | None:
    row = conn.execute(sql.ENTRY, (session_id, key)).fetchone()
    return None if row is None else StoredValue(json=row[0], network_content=bool(row[1]))


def items(conn: sqlite3.Connection, session_id: str) -> dict[str, StoredValue]:
    rows = conn.execute(sql.ENTRIES, (session_id,))
    return {key: StoredValue(json=text, network_content=bool(net)) for key, text, net in rows}


def delete(conn: sqlite3.Connection, session_id: str, key: str) -> bool:
    with write(conn):
        return conn.execute(sql.DELETE_ENTRY, (session_id, key)).rowcount > 0


def put_new(conn: sqlite3.Connection, session_id: str, key: str, value: StoredValue) -> bool:
    """Insert one entry unless the key has one (one statement: atomic across processes)."""
    params = (session_id, key, value.json, value.bytes, int(value.network_content))
    with write(conn):
        return conn.execute(sql.INSERT_NEW_ENTRY, params).rowcount > 0


def apply(
    conn: sqlite3.Connection,
    session_id: str,
    changes: Mapping[str, StoredValue | None],
    max_total_bytes: int | None,
) -> None:
    """One cell's writes, then the total re-check, in one transaction."""
    with write(conn):
        for key, value in changes.items():
            if value is None:
                conn.execute(sql.DELETE_ENTRY, (session_id, key))
            else:
                conn.execute(
                    sql.UPSERT_ENTRY,
                    (session_id, key, value.json, value.bytes, int(value.network_content)),
                )
        if max_total_bytes is not None:
            total = conn.execute(sql.ENTRY_TOTAL, (session_id,)).fetchone()[0]
            if total > max_total_bytes:
                raise StoreRangeError(TOTAL_MESSAGE)


def put_result(
    conn: sqlite3.Connection, key: tuple[str, str], text: str, expires_at: float | None
) -> None:
    with write(conn):
        conn.execute(sql.PUT_RESULT, (*key, text, expires_at))


def get_result(conn: sqlite3.Connection, key: tuple[str, str], now: float) -> str | None:
    row = conn.execute(sql.GET_RESULT, (*key, now)).fetchone()
    return None if row is None else str(row[0])


def list_results(conn: sqlite3.Connection, scope: str, now: float) -> list[str]:
    return [str(row[0]) for row in conn.execute(sql.LIST_RESULTS, (scope, now))]


def delete_result(conn: sqlite3.Connection, key: tuple[str, str]) -> bool:
    with write(conn):
        return conn.execute(sql.DELETE_RESULT, key).rowcount > 0
