"""Opening an `SQLiteStore` file: connection settings, schema and write transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from ..errors import ConfigurationError

__all__ = ["SCHEMA_VERSION", "connect", "write"]

SCHEMA_VERSION: Final = 1
_SCHEMA: Final = (
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
)


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


def connect(path: Path, *, timeout: float, synchronous: str) -> sqlite3.Connection:
    """Open (creating when missing) the database file with its schema in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        with write(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ConfigurationError(
                    f"Session store {str(path)!r} has schema version {version}, "
                    f"newer than this clawcell's {SCHEMA_VERSION}; upgrade clawcell."
                )
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.close()
        raise
    return conn
