"""`SQLiteStore`'s `SessionDirectory`, as functions of one open connection (see `_directory`)."""

from __future__ import annotations

import sqlite3

from ..._session_ids import derived_bounds
from .. import _directory_sql as sql
from .._directory import SessionPage, SessionRecord, decode_cursor, encode_cursor, record_from_row
from ._connection import write

__all__ = ["delete", "page", "record", "update"]

_PAGE = sql.PAGE.replace("{contains}", sql.SQLITE_CONTAINS)
_DELETE_DERIVED = tuple(s.replace("{c}", "") for s in sql.DELETE_DERIVED)
_SEARCH_TABLES = (
    "DELETE FROM transcript_fts WHERE session_id = ?",
    "DELETE FROM transcript_fts_state WHERE session_id = ?",
)


def page(
    conn: sqlite3.Connection, query: str, archived: bool, limit: int, after: str | None
) -> SessionPage:
    """One page of the list (the arguments are checked by the store)."""
    pinned, updated, last = decode_cursor(after) if after is not None else (0, 0.0, "")
    folded = query.casefold()
    params = (int(archived), not folded, folded, after is None, pinned, pinned, updated,
              updated, last, limit + 1)  # fmt: skip
    rows = [record_from_row(row) for row in conn.execute(_PAGE, params)]
    more = len(rows) > limit
    return SessionPage(sessions=rows[:limit], next=encode_cursor(rows[limit - 1]) if more else None)


def record(conn: sqlite3.Connection, session_id: str) -> SessionRecord | None:
    """One session's record."""
    row = conn.execute(sql.RECORD, (session_id,)).fetchone()
    return None if row is None else record_from_row(row)


def update(
    conn: sqlite3.Connection,
    session_id: str,
    title: str | None,
    pinned: bool | None,
    archived: bool | None,
) -> SessionRecord | None:
    """Change the given fields in one statement; the record after."""
    flags = [None if flag is None else int(flag) for flag in (pinned, archived)]
    with write(conn):
        row = conn.execute(sql.UPDATE, (title, *flags, session_id)).fetchone()
    return None if row is None else record_from_row(row)


def delete(conn: sqlite3.Connection, session_id: str) -> bool:
    """Remove the session's rows and its derived rows (and its full-text index rows, once
    that index exists)."""
    bounds = derived_bounds(session_id)
    with write(conn):
        indexed = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'transcript_fts_state'"
        ).fetchone()[0]
        for statement in _SEARCH_TABLES if indexed else ():
            conn.execute(statement, (session_id,))
        for statement in _DELETE_DERIVED:
            conn.execute(statement, bounds)
        rows = 0
        for statement in sql.DELETE:
            rows = conn.execute(statement, (session_id,)).rowcount
    return rows > 0
