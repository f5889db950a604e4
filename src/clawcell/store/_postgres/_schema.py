"""`PostgresStore`'s schema: versioned migrations, applied once on open under a lock.

Everything lives in one PostgreSQL schema (namespace), `clawcell` unless told otherwise, so
a store can share a database with the application. Migration *n* takes the schema from
version *n − 1* to *n*; on open, the store takes a transaction-scoped advisory lock (so
workers starting together migrate once), applies the missing migrations and records each in
`schema_version`. Version 1 has entries, runs with their leases, transcripts and documents;
version 2 adds saved results; version 3 a full-text `search` column of transcript text (a
generated `tsvector`) with a GIN index, computed for the existing rows when an older schema is
migrated; version 4 the session list's title, pin and archive flag (`SessionDirectory`).

A trigger on `runs` sends a `NOTIFY` on the schema's channel whenever a run is inserted,
deleted or changes revision; the payload is the JSON array `[session_id, run_id]`, ids only.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Final, LiteralString, cast

from ...errors import ConfigurationError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["SCHEMA_VERSION", "channel_of", "check_schema_name", "migrate", "trusted"]

_NAME: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")
_MIGRATION_LOCK: Final = 0x636C6177  # "claw"

_V1: Final = (
    """CREATE TABLE entries (
        session_id text NOT NULL,
        key text NOT NULL,
        json text NOT NULL,
        bytes integer NOT NULL,
        network_content integer NOT NULL,
        PRIMARY KEY (session_id, key)
    )""",
    """CREATE TABLE runs (
        session_id text NOT NULL,
        run_id text NOT NULL,
        blob bytea NOT NULL,
        meta text NOT NULL,
        saved_at double precision NOT NULL,
        expires_at double precision,
        owner text,
        lease_expires_at double precision,
        version integer NOT NULL DEFAULT 1,
        revision integer NOT NULL DEFAULT 1,
        PRIMARY KEY (session_id, run_id)
    )""",
    "CREATE INDEX runs_by_expiry ON runs (expires_at) WHERE expires_at IS NOT NULL",
    """CREATE TABLE sessions (
        session_id text PRIMARY KEY,
        updated_at double precision NOT NULL,
        entries integer NOT NULL
    )""",
    """CREATE TABLE transcripts (
        session_id text NOT NULL,
        seq integer NOT NULL,
        entry text NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    """CREATE TABLE documents (
        ref text NOT NULL,
        path text NOT NULL,
        data bytea NOT NULL,
        PRIMARY KEY (ref, path)
    )""",
    """CREATE FUNCTION notify_run_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            PERFORM pg_notify(TG_ARGV[0], json_build_array(OLD.session_id, OLD.run_id)::text);
        ELSE
            PERFORM pg_notify(TG_ARGV[0], json_build_array(NEW.session_id, NEW.run_id)::text);
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER runs_added_or_removed AFTER INSERT OR DELETE ON runs
        FOR EACH ROW EXECUTE FUNCTION notify_run_change('{channel}')""",
    """CREATE TRIGGER runs_changed AFTER UPDATE ON runs FOR EACH ROW
        WHEN (OLD.revision IS DISTINCT FROM NEW.revision)
        EXECUTE FUNCTION notify_run_change('{channel}')""",
)
_V2: Final = (
    """CREATE TABLE results (
        scope text NOT NULL,
        result_id text NOT NULL,
        json text NOT NULL,
        expires_at double precision,
        PRIMARY KEY (scope, result_id)
    )""",
    "CREATE INDEX results_by_expiry ON results (expires_at) WHERE expires_at IS NOT NULL",
)
_V3: Final = (
    # The text of an entry's `text` blocks, for the full-text index and `search_transcripts`
    # (immutable: it reads only its argument, so an index may be built on it).
    """CREATE FUNCTION transcript_text(entry text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(string_agg(c ->> 'text', ' '), '')
        FROM jsonb_array_elements(CASE
            WHEN jsonb_typeof(entry::jsonb -> 'content') = 'array'
            THEN entry::jsonb -> 'content' ELSE '[]'::jsonb END) AS c
        WHERE c ->> 'type' = 'text'
    $$""",
    # The entry's `tsvector`, computed once when the entry is appended (ranking reads it too).
    """ALTER TABLE transcripts ADD COLUMN search tsvector
        GENERATED ALWAYS AS (to_tsvector('simple', transcript_text(entry))) STORED""",
    "CREATE INDEX transcripts_text_search ON transcripts USING gin (search)",
)
_V4: Final = (
    # Session metadata (`SessionDirectory`): `NULL` title = none yet (the first user message
    # gives one); the sessions listed before titles existed keep their id (`''`).
    "ALTER TABLE sessions ADD COLUMN title text",
    "UPDATE sessions SET title = ''",
    "ALTER TABLE sessions ADD COLUMN pinned integer NOT NULL DEFAULT 0",
    "ALTER TABLE sessions ADD COLUMN archived integer NOT NULL DEFAULT 0",
    "CREATE INDEX sessions_listed ON sessions (archived, pinned DESC, updated_at DESC, session_id)",
)
MIGRATIONS: Final = (_V1, _V2, _V3, _V4)
SCHEMA_VERSION: Final = len(MIGRATIONS)


def check_schema_name(schema: object) -> str:
    """A schema name safe to put in SQL unquoted: lower-case letters, digits, `_`."""
    if not isinstance(schema, str) or not _NAME.fullmatch(schema):
        raise ConfigurationError(
            f"`schema` must be 1–40 lower-case letters, digits or `_` (not starting with a "
            f"digit), got {schema!r}."
        )
    return schema


def trusted(text: str) -> LiteralString:
    """SQL built only from our constants and names passed through `check_schema_name`."""
    return cast(LiteralString, text)


def channel_of(schema: str) -> str:
    """The `LISTEN`/`NOTIFY` channel of a schema's run changes."""
    return f"{schema}_runs"


async def migrate(conn: AsyncConnection[tuple[object, ...]], schema: str) -> int:
    """Bring `schema` to `SCHEMA_VERSION`; the version it had before (0 when new)."""
    async with conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_MIGRATION_LOCK, schema)
        )
        await conn.execute(trusted(f"CREATE SCHEMA IF NOT EXISTS {schema}"))
        await conn.execute(
            trusted(
                f"CREATE TABLE IF NOT EXISTS {schema}.schema_version "
                "(version integer PRIMARY KEY, applied_at double precision NOT NULL)"
            )
        )
        cursor = await conn.execute(trusted(f"SELECT MAX(version) FROM {schema}.schema_version"))
        row = await cursor.fetchone()
        found = int(row[0]) if row is not None and isinstance(row[0], int) else 0
        if found > SCHEMA_VERSION:
            raise ConfigurationError(
                f"PostgreSQL schema {schema!r} has schema version {found}, newer than this "
                f"clawcell's {SCHEMA_VERSION}; upgrade clawcell."
            )
        await conn.execute(trusted(f"SET LOCAL search_path = {schema}"))
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version - 1]:
                await conn.execute(trusted(statement.replace("{channel}", channel_of(schema))))
            await conn.execute("INSERT INTO schema_version VALUES (%s, %s)", (version, time.time()))
    return found
