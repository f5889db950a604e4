"""Versioned schemas: a clawcell 0.1 (version 1) SQLite file is upgraded in place on open."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from clawcell.store import SQLiteStore, StoredValue

# clawcell 0.1's schema, exactly as it created files (PRAGMA user_version = 1).
V1_SCHEMA = (
    """CREATE TABLE entries (
        session_id TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL,
        bytes INTEGER NOT NULL, network_content INTEGER NOT NULL,
        PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID""",
    """CREATE TABLE runs (
        session_id TEXT NOT NULL, run_id TEXT NOT NULL, blob BLOB NOT NULL,
        meta TEXT NOT NULL, saved_at REAL NOT NULL, PRIMARY KEY (session_id, run_id)
    )""",
)


def version_1_file(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        for statement in V1_SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT INTO entries VALUES ('s', 'k', '[1]', 3, 1)")
        conn.execute(
            "INSERT INTO runs VALUES ('s', 'cm_old', x'00ff', ?, 12.5)",
            (json.dumps({"expiresAt": 100.0, "cell": {"x": 1}}),),
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()


def test_a_version_1_file_is_upgraded_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    version_1_file(path)

    async def scenario() -> tuple[Any, ...]:
        async with SQLiteStore(path) as store:
            versions = await store.upgrade()
            parked = await store.load_run("s", "cm_old")
            swept = await store.sweep(now=200.0)
            await store.append_transcript("s", [{"n": 1}])
            return versions, await store.items("s"), parked, swept.runs

    versions, items, parked, swept = asyncio.run(scenario())

    assert versions == (1, 4)
    assert items == {"k": StoredValue(json="[1]", network_content=True)}
    assert parked is not None
    assert (parked.blob, parked.saved_at, parked.version, parked.owner) == (
        b"\x00\xff",
        12.5,
        1,
        None,
    )
    assert swept == 1  # `expiresAt` of the old row was carried into the new column
    with sqlite3.connect(path) as conn:
        recorded = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
        pragma = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    assert (recorded, pragma) == ([(2,), (3,), (4,)], 4)


def test_a_new_file_records_every_migration_and_reopens_without_change(tmp_path: Path) -> None:
    path = tmp_path / "new.db"

    async def versions() -> tuple[int, int]:
        async with SQLiteStore(path) as store:
            return await store.upgrade()

    assert asyncio.run(versions()) == (0, 4)
    assert asyncio.run(versions()) == (4, 4)
    with sqlite3.connect(path) as conn:
        recorded = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    conn.close()
    assert recorded == [(1,), (2,), (3,), (4,)]


def test_a_version_3_file_gets_session_titles_and_keeps_its_sessions_listed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v3.db"

    async def fill() -> None:
        async with SQLiteStore(path) as store:
            await store.append_transcript("s", [{"role": "user", "content": "hi"}])

    asyncio.run(fill())
    with sqlite3.connect(path) as conn:  # back to version 3
        conn.execute("DROP INDEX sessions_listed")
        for column in ("title", "pinned", "archived"):
            conn.execute(f"ALTER TABLE sessions DROP COLUMN {column}")
        conn.execute("DELETE FROM schema_version WHERE version = 4")
        conn.execute("PRAGMA user_version = 3")
    conn.close()

    async def upgrade() -> tuple[Any, ...]:
        async with SQLiteStore(path) as store:
            versions = await store.upgrade()
            await store.append_transcript("s", [{"role": "user", "content": "not a title"}])
            page = await store.session_page()
            return versions, [(r.session_id, r.title, r.entries) for r in page.sessions]

    # a session from before titles keeps showing its id (`""`): later messages don't title it
    assert asyncio.run(upgrade()) == ((3, 4), [("s", "", 2)])
