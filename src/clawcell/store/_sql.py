"""The SQL both database backends run, written once.

Statements use `?` placeholders and unqualified table names: `SQLiteStore` runs them as
they are; `PostgresStore` turns `?` into `%s` (`for_postgres`) and sets `search_path` to its
schema. Only the table definitions and the locking differ, and live with each backend.

Every lease rule is one compare-and-set statement, so it is atomic in both engines: a claim
is an `UPDATE … WHERE (owner IS NULL OR lease_expires_at <= now) … RETURNING`, and a fenced
write is an `UPDATE … WHERE version = expected`. In PostgreSQL two concurrent claims queue on
the row lock and the second re-checks the `WHERE` against the first one's committed row.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from typing import Any, Final, LiteralString, cast

from ..errors import SnapshotError
from ._records import ParkedRun

__all__ = [
    "CLAIM_RUN",
    "DELETE_ENTRY",
    "DELETE_RESULT",
    "DELETE_RUN",
    "DOCUMENT_FILE",
    "DROP_DOCUMENT",
    "ENTRIES",
    "ENTRY",
    "ENTRY_TOTAL",
    "GET_RESULT",
    "INSERT_DOCUMENT_FILE",
    "INSERT_NEW_ENTRY",
    "INSERT_TRANSCRIPT",
    "LIST_RUNS",
    "LOAD_RUN",
    "LOCK_RUN_META",
    "PUT_RESULT",
    "RELEASE_RUN",
    "RENEW_LEASE",
    "RUN_COLUMNS",
    "RUN_REVISION",
    "RUN_VERSION",
    "SAVE_RUN",
    "SAVE_RUN_FENCED",
    "SESSIONS",
    "SWEEP_RESULTS",
    "SWEEP_RUNS",
    "TRANSCRIPT",
    "UPDATE_RUN_META",
    "UPSERT_ENTRY",
    "UPSERT_SESSION",
    "for_postgres",
    "intact_runs",
    "meta_of",
    "run_from_row",
]

RUN_COLUMNS: Final = "run_id, blob, meta, saved_at, version, revision, owner, lease_expires_at"

ENTRY: Final = "SELECT json, network_content FROM entries WHERE session_id = ? AND key = ?"
ENTRIES: Final = "SELECT key, json, network_content FROM entries WHERE session_id = ?"
UPSERT_ENTRY: Final = (
    "INSERT INTO entries (session_id, key, json, bytes, network_content) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id, key) DO UPDATE SET json = excluded.json, "
    "bytes = excluded.bytes, network_content = excluded.network_content"
)
# session_id, key, json, bytes, network_content
INSERT_NEW_ENTRY: Final = (
    "INSERT INTO entries (session_id, key, json, bytes, network_content) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id, key) DO NOTHING"
)
DELETE_ENTRY: Final = "DELETE FROM entries WHERE session_id = ? AND key = ?"
ENTRY_TOTAL: Final = "SELECT COALESCE(SUM(bytes), 0) FROM entries WHERE session_id = ?"

# session_id, run_id, blob, meta, saved_at, expires_at
SAVE_RUN: Final = (
    "INSERT INTO runs (session_id, run_id, blob, meta, saved_at, expires_at, owner, "
    "lease_expires_at, version, revision) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, 1, 1) "
    "ON CONFLICT (session_id, run_id) DO UPDATE SET blob = excluded.blob, "
    "meta = excluded.meta, saved_at = excluded.saved_at, expires_at = excluded.expires_at, "
    "owner = NULL, lease_expires_at = NULL, version = runs.version + 1, "
    "revision = runs.revision + 1 RETURNING version"
)
# blob, meta, saved_at, expires_at, session_id, run_id, version
SAVE_RUN_FENCED: Final = (
    "UPDATE runs SET blob = ?, meta = ?, saved_at = ?, expires_at = ?, "
    "revision = revision + 1 WHERE session_id = ? AND run_id = ? AND version = ?"
)
LOAD_RUN: Final = f"SELECT {RUN_COLUMNS} FROM runs WHERE session_id = ? AND run_id = ?"
LOCK_RUN_META: Final = (
    "SELECT meta, version FROM runs WHERE session_id = ? AND run_id = ? FOR UPDATE"
)
LIST_RUNS: Final = (
    "SELECT run_id, NULL, meta, saved_at, version, revision, owner, lease_expires_at "
    "FROM runs WHERE session_id = ? ORDER BY saved_at, run_id"
)
DELETE_RUN: Final = "DELETE FROM runs WHERE session_id = ? AND run_id = ?"
RUN_VERSION: Final = "SELECT version FROM runs WHERE session_id = ? AND run_id = ?"
RUN_REVISION: Final = "SELECT revision FROM runs WHERE session_id = ? AND run_id = ?"
# owner, lease_expires_at, session_id, run_id, now, now
CLAIM_RUN: Final = (
    "UPDATE runs SET owner = ?, lease_expires_at = ?, version = version + 1, "
    "revision = revision + 1 WHERE session_id = ? AND run_id = ? "
    "AND (owner IS NULL OR lease_expires_at <= ?) AND (expires_at IS NULL OR expires_at > ?) "
    f"RETURNING {RUN_COLUMNS}"
)
# lease_expires_at, session_id, run_id, version, owner
RENEW_LEASE: Final = (
    "UPDATE runs SET lease_expires_at = ? "
    "WHERE session_id = ? AND run_id = ? AND version = ? AND owner = ?"
)
# session_id, run_id, version, owner
RELEASE_RUN: Final = (
    "UPDATE runs SET owner = NULL, lease_expires_at = NULL, revision = revision + 1 "
    "WHERE session_id = ? AND run_id = ? AND version = ? AND owner = ?"
)
# meta, expires_at, session_id, run_id, version
UPDATE_RUN_META: Final = (
    "UPDATE runs SET meta = ?, expires_at = ?, revision = revision + 1 "
    "WHERE session_id = ? AND run_id = ? AND version = ?"
)
# now, now
SWEEP_RUNS: Final = (
    "DELETE FROM runs WHERE expires_at <= ? AND (owner IS NULL OR lease_expires_at <= ?) "
    "RETURNING session_id, run_id"
)

# session_id, updated_at, count, count; returns the entries after it and the title (`NULL`:
# none yet, the only case a default title is worth an UPDATE). The title itself, not
# `title IS NULL`: SQLite 3.40 answers 0 for that in this RETURNING though the title is NULL.
UPSERT_SESSION: Final = (
    "INSERT INTO sessions (session_id, updated_at, entries) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at, "
    "entries = sessions.entries + ? RETURNING entries, title"
)
INSERT_TRANSCRIPT: Final = "INSERT INTO transcripts (session_id, seq, entry) VALUES (?, ?, ?)"
TRANSCRIPT: Final = "SELECT entry FROM transcripts WHERE session_id = ? ORDER BY seq"
SESSIONS: Final = (
    "SELECT session_id, updated_at, entries FROM sessions ORDER BY updated_at DESC, session_id"
)
DROP_DOCUMENT: Final = "DELETE FROM documents WHERE ref = ?"
INSERT_DOCUMENT_FILE: Final = "INSERT INTO documents (ref, path, data) VALUES (?, ?, ?)"
DOCUMENT_FILE: Final = "SELECT data FROM documents WHERE ref = ? AND path = ?"

# scope, result_id, json, expires_at
PUT_RESULT: Final = (
    "INSERT INTO results (scope, result_id, json, expires_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (scope, result_id) DO UPDATE SET json = excluded.json, "
    "expires_at = excluded.expires_at"
)
# scope, result_id, now
GET_RESULT: Final = (
    "SELECT json FROM results WHERE scope = ? AND result_id = ? "
    "AND (expires_at IS NULL OR expires_at > ?)"
)
# scope, now
LIST_RESULTS: Final = (
    "SELECT result_id FROM results WHERE scope = ? "
    "AND (expires_at IS NULL OR expires_at > ?) ORDER BY result_id"
)
DELETE_RESULT: Final = "DELETE FROM results WHERE scope = ? AND result_id = ?"
SWEEP_RESULTS: Final = "DELETE FROM results WHERE expires_at <= ?"


def for_postgres(statement: LiteralString) -> LiteralString:
    """`statement` with psycopg's `%s` placeholders (no statement here contains a `%`)."""
    return statement.replace("?", "%s")


def run_from_row(row: tuple[Any, ...]) -> ParkedRun:
    """A `ParkedRun` from the columns of `RUN_COLUMNS` (a `NULL` blob reads as empty).

    Raises:
        SnapshotError: a damaged row (meta that is not a JSON object, a column of the wrong
            type); the caller discards the run.
    """
    run_id, blob, meta, saved_at, version, revision, owner, lease_expires_at = row
    problem = _row_problem(row[1:2] + row[3:])
    parsed = _meta_object(meta)
    if problem is None and parsed is None:
        problem = f"meta {str(meta)[:80]!r} is not a JSON object"
    if problem is not None or parsed is None or not isinstance(run_id, str):
        raise SnapshotError(
            f"parked run {run_id!r} is damaged in the store ({problem}); it cannot be continued."
        )
    return ParkedRun(
        run_id=run_id,
        blob=b"" if blob is None else bytes(blob),
        meta=parsed,
        saved_at=float(saved_at),
        version=version,
        revision=revision,
        owner=owner,
        lease_expires_at=None if lease_expires_at is None else float(lease_expires_at),
    )


def intact_runs(rows: Iterable[tuple[Any, ...]]) -> list[ParkedRun]:
    """The runs of `rows` that are not damaged (a listing skips those; `wait` discards them)."""
    runs: list[ParkedRun] = []
    for row in rows:
        with contextlib.suppress(SnapshotError):
            runs.append(run_from_row(row))
    return runs


def meta_of(text: object) -> dict[str, Any]:
    """A stored `meta` column as a mapping.

    Raises:
        SnapshotError: when it is not the JSON text of an object.
    """
    parsed = _meta_object(text)
    if parsed is None:
        raise SnapshotError(f"parked run meta {str(text)[:80]!r} is not a JSON object.")
    return parsed


def _meta_object(text: object) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    try:
        value: object = json.loads(text)
    except ValueError:
        return None
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _row_problem(columns: tuple[Any, ...]) -> str | None:
    """What is wrong with a run row's typed columns (SQLite keeps any type), or `None`.

    `columns`: blob, saved_at, version, revision, owner, lease_expires_at.
    """
    blob, saved_at, version, revision, owner, lease = columns
    checks = (
        ("snapshot", blob, blob is None or isinstance(blob, bytes | bytearray | memoryview)),
        ("saved_at", saved_at, _number(saved_at)),
        ("version", version, _integer(version)),
        ("revision", revision, _integer(revision)),
        ("owner", owner, owner is None or isinstance(owner, str)),
        ("lease_expires_at", lease, lease is None or _number(lease)),
    )
    for name, value, ok in checks:
        if not ok:
            return f"{name} is a {type(value).__name__}"
    return None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
