"""Damaged run rows (written by hand, a bad migration, another program): `wait` raises
`SnapshotError` once, the row is discarded and the event audited; the next `wait` is an
`InputError` and the session works on. On SQLite (which keeps any value in any column) and
PostgreSQL (typed columns; `meta` is text)."""

from __future__ import annotations

import functools
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, LiteralString, cast

import psycopg
import pytest
from psycopg import sql

from clawcell import CodeMode, InputError, Limits, SnapshotError
from clawcell.store import PostgresStore, SQLiteStore
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
SESSION = "damaged"
PARK = "await yield_control('x'); return 'resumed';"
BOTH = {
    "meta_not_json": "meta = 'not json'",
    "meta_an_array": "meta = '[1, 2]'",
    "meta_null": "meta = 'null'",
    "meta_a_string": "meta = '\"text\"'",
}
SQLITE_ONLY = {
    "snapshot_as_text": "blob = 'a snapshot as text'",
    "snapshot_as_number": "blob = 42",
    "lease_time_as_text": "owner = 'w', lease_expires_at = 'soon'",
    "saved_at_as_text": "saved_at = 'yesterday'",
    "owner_as_a_blob": "owner = x'00', lease_expires_at = 9e18",
}


def _sqlite_damage(path: Path, assignment: str, run_id: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE runs SET {assignment} WHERE run_id = ?", (run_id,))


def _sqlite_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def _outcome(
    store_of: Callable[[], SQLiteStore | PostgresStore],
    damage: Callable[[str], None],
    rows: Callable[[], Awaitable[int]],
) -> tuple[str, str, int, Any]:
    async def body() -> tuple[str, str, int, Any]:
        store = store_of()
        async with store, CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
            parked = await mode.exec(PARK)
            damage(parked["runId"])
        store = store_of()
        async with store, CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
            with pytest.raises(SnapshotError) as first:
                await mode.wait(parked["runId"])
            with pytest.raises(InputError) as second:
                await mode.wait(parked["runId"])
            left = await rows()
            clean = await mode.exec("return 6 * 7")
        return first.value.message, second.value.message, left, clean["value"]

    return run(body())


@pytest.mark.parametrize(
    "assignment", [*BOTH.values(), *SQLITE_ONLY.values()], ids=[*BOTH, *SQLITE_ONLY]
)
def test_a_damaged_sqlite_row_fails_once_and_is_discarded(
    assignment: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "state.db"

    async def rows() -> int:
        return _sqlite_rows(path)

    with caplog.at_level(logging.WARNING, logger="clawcell.audit"):
        first, second, left, clean = _outcome(
            lambda: SQLiteStore(path), functools.partial(_sqlite_damage, path, assignment), rows
        )
    assert "damaged" in first
    assert second == "code mode run is unavailable or expired."
    assert (left, clean) == (0, 42)
    assert any("discarded parked run" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("assignment", list(BOTH.values()), ids=list(BOTH))
def test_a_damaged_postgres_row_fails_once_and_is_discarded(
    assignment: str, postgres_dsn: str, postgres_schema: str
) -> None:
    table = sql.Identifier(postgres_schema, "runs")

    def damage(run_id: str) -> None:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            statement = sql.SQL("UPDATE {} SET ").format(table) + sql.SQL(
                cast(LiteralString, assignment)
            )
            conn.execute(statement + sql.SQL(" WHERE run_id = %s"), (run_id,))

    async def rows() -> int:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()
        return 0 if row is None else int(row[0])

    first, second, left, clean = _outcome(
        lambda: PostgresStore(postgres_dsn, schema=postgres_schema, max_size=2), damage, rows
    )
    assert "damaged" in first
    assert second == "code mode run is unavailable or expired."
    assert (left, clean) == (0, 42)
