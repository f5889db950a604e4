"""`SQLiteStore`'s transcripts and documents, as functions of one open connection.

Each runs on the store's worker thread; writes are one `BEGIN IMMEDIATE` transaction each.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import _directory_sql as directory_sql
from .. import _sql as sql
from .._records import SessionInfo
from ._connection import write

__all__ = ["append", "document_file", "put_document", "read", "sessions"]


def append(
    conn: sqlite3.Connection,
    session_id: str,
    entries: Sequence[str],
    now: float,
    *,
    title: str | None = None,
    fence: Callable[[sqlite3.Connection], None] | None = None,
) -> None:
    """Append encoded entries after the session's last one, bump its summary and give it
    `title` when it has none yet (`_directory.default_title`); after `fence` (a fenced lease
    renewal) in the same transaction, when given."""
    with write(conn):
        if fence is not None:
            fence(conn)
        if not entries:
            return
        total, titled = conn.execute(
            sql.UPSERT_SESSION, (session_id, now, len(entries), len(entries))
        ).fetchall()[0]
        first = int(total) - len(entries)
        conn.executemany(
            sql.INSERT_TRANSCRIPT,
            [(session_id, first + i, text) for i, text in enumerate(entries)],
        )
        if title is not None and titled is None:  # a titled session needs no UPDATE
            conn.execute(directory_sql.DEFAULT_TITLE, (title, session_id))


def read(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """The session's entries in append order."""
    rows = conn.execute(sql.TRANSCRIPT, (session_id,))
    return [json.loads(text) for (text,) in rows]


def sessions(conn: sqlite3.Connection) -> list[SessionInfo]:
    """Every session with a transcript, most recently appended to first."""
    rows = conn.execute(
        "SELECT session_id, updated_at, entries FROM sessions ORDER BY updated_at DESC, session_id"
    )
    return [SessionInfo(session_id=s, updated_at=u, entries=n) for s, u, n in rows]


def put_document(conn: sqlite3.Connection, ref: str, files: Mapping[str, bytes]) -> None:
    """Replace every file of document `ref`."""
    with write(conn):
        conn.execute(sql.DROP_DOCUMENT, (ref,))
        conn.executemany(
            sql.INSERT_DOCUMENT_FILE,
            [(ref, path, data) for path, data in files.items()],
        )


def document_file(conn: sqlite3.Connection, ref: str, path: str) -> bytes | None:
    """One file's bytes, or `None`."""
    row = conn.execute(sql.DOCUMENT_FILE, (ref, path)).fetchone()
    return None if row is None else bytes(row[0])
