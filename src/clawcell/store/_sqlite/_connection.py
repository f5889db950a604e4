"""Opening an `SQLiteStore` file: connection settings, versioned schema and write transactions.

The schema is a list of migrations; migration *n* takes a file from version *n − 1* to *n*.
On open, every missing migration runs in one `BEGIN IMMEDIATE` transaction (so two
processes opening an old file at once upgrade it once), each recorded in `schema_version`;
`PRAGMA user_version` mirrors the version so that clawcell 0.1, which knew only that
pragma, refuses an upgraded file instead of misreading it. Version 1 is clawcell 0.1's
schema (entries and runs); files from before `schema_version` existed are read by their
`user_version`. Version 2 adds transcripts, documents and the lease columns of `runs`;
version 3 saved results; version 4 the session list's title, pin and archive flag.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from ...errors import ConfigurationError

__all__ = ["SCHEMA_VERSION", "connect", "write"]

_V1: Final = (
    """CREATE TABLE IF NOT EXISTS entries (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        json TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        network_content INTEGER NOT NULL,
        PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS runs (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        blob BLOB NOT NULL,
        meta TEXT NOT NULL,
        saved_at REAL NOT NULL,
        PRIMARY KEY (session_id, run_id)
    )""",
)
_V2: Final = (
    # `IF NOT EXISTS`: early version-1 files of this branch already had these three tables.
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        updated_at REAL NOT NULL,
        entries INTEGER NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS transcripts (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        entry TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS documents (
        ref TEXT NOT NULL,
        path TEXT NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (ref, path)
    )""",
    "ALTER TABLE runs ADD COLUMN expires_at REAL",
    "ALTER TABLE runs ADD COLUMN owner TEXT",
    "ALTER TABLE runs ADD COLUMN lease_expires_at REAL",
    "ALTER TABLE runs ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE runs ADD COLUMN revision INTEGER NOT NULL DEFAULT 1",
    """UPDATE runs SET expires_at = json_extract(meta, '$.expiresAt')
        WHERE json_type(meta, '$.expiresAt') IN ('integer', 'real')""",
    "CREATE INDEX runs_by_expiry ON runs (expires_at) WHERE expires_at IS NOT NULL",
)
_V3: Final = (
    """CREATE TABLE results (
        scope TEXT NOT NULL,
        result_id TEXT NOT NULL,
        json TEXT NOT NULL,
        expires_at REAL,
        PRIMARY KEY (scope, result_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX results_by_expiry ON results (expires_at) WHERE expires_at IS NOT NULL",
)
_V4: Final = (
    # Session metadata (`SessionDirectory`): `NULL` title = none yet (the first user message
    # gives one); the sessions listed before titles existed keep their id (`''`).
    "ALTER TABLE sessions ADD COLUMN title TEXT",
    "UPDATE sessions SET title = ''",
    "ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX sessions_listed ON sessions (archived, pinned DESC, updated_at DESC, session_id)",
)
MIGRATIONS: Final = (_V1, _V2, _V3, _V4)
SCHEMA_VERSION: Final = len(MIGRATIONS)


@contextmanager
def write(conn: sqlite3.Connection) -> Generator[None]:
    """One write transaction that holds the write lock from its start."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def connect(path: Path, *, timeout: float, synchronous: str) -> tuple[sqlite3.Connection, int]:
    """Open (creating when missing) the database at the current schema.

    Returns:
        The connection and the schema version the file had before (0 for a new file).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        _enable_wal(conn, timeout)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        # SQLite's own `lower` folds ASCII only; the session list's search folds like Python.
        conn.create_function("casefold", 1, _casefold, deterministic=True)
        with write(conn):
            found = _version(conn)
            if found > SCHEMA_VERSION:
                raise ConfigurationError(
                    f"Session store {str(path)!r} has schema version {found}, "
                    f"newer than this clawcell's {SCHEMA_VERSION}; upgrade clawcell."
                )
            _migrate(conn, found)
    except BaseException:
        conn.close()
        raise
    return conn, found


def _casefold(text: object) -> str | None:
    return text.casefold() if isinstance(text, str) else None


def _enable_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch to WAL, retrying while another connection holds the file.

    SQLite does not run the busy handler for a journal-mode change, so two connections
    opening a new file at the same moment can see "database is locked" at once; the mode is
    persistent, so later opens find it set and return at the first try.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied_at REAL)"
    )
    recorded = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    pragma = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return max(pragma, int(recorded or 0))


def _migrate(conn: sqlite3.Connection, found: int) -> None:
    for version in range(found + 1, SCHEMA_VERSION + 1):
        for statement in MIGRATIONS[version - 1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, time.time()))
    if found < SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
