"""The SQL of `SessionDirectory` shared by `SQLiteStore` and `PostgresStore` (`?` placeholders;
`for_postgres` turns them into psycopg's). Titles: `NULL` means none yet (a default title
from the first user message may be set), `''` none (a session from before titles existed)."""

from __future__ import annotations

from typing import Final, LiteralString

__all__ = [
    "DEFAULT_TITLE",
    "DELETE",
    "DELETE_DERIVED",
    "PAGE",
    "RECORD",
    "UPDATE",
]

COLUMNS: Final = "session_id, coalesce(title, ''), pinned, archived, updated_at, entries"
# title, session_id
DEFAULT_TITLE: Final = "UPDATE sessions SET title = ? WHERE session_id = ? AND title IS NULL"
RECORD: Final = f"SELECT {COLUMNS} FROM sessions WHERE session_id = ?"
# title, pinned, archived, session_id
UPDATE: Final = (
    "UPDATE sessions SET title = coalesce(?, title), pinned = coalesce(?, pinned), "
    f"archived = coalesce(?, archived) WHERE session_id = ? RETURNING {COLUMNS}"
)
# archived, no query, folded query, first page, pinned, pinned, updated, updated, id, limit;
# `{contains}` is the dialect's "folded text holds the folded query" test.
PAGE: Final = (
    f"SELECT {COLUMNS} FROM sessions WHERE archived = ? "
    "AND (? OR {contains}) "
    "AND (? OR pinned < ? OR (pinned = ? AND (updated_at < ? "
    "OR (updated_at = ? AND session_id > ?)))) "
    "ORDER BY pinned DESC, updated_at DESC, session_id LIMIT ?"
)
SQLITE_CONTAINS: Final = "instr(casefold(coalesce(title, '') || ' ' || session_id), ?) > 0"
POSTGRES_CONTAINS: Final = "strpos(lower(coalesce(title, '') || ' ' || session_id), ?) > 0"
# session_id (each); the last one's row count says whether the session had a record
DELETE: Final[tuple[LiteralString, ...]] = (
    "DELETE FROM transcripts WHERE session_id = ?",
    "DELETE FROM entries WHERE session_id = ?",
    "DELETE FROM runs WHERE session_id = ?",
    "DELETE FROM results WHERE scope = ?",
    "DELETE FROM sessions WHERE session_id = ?",
)
# The session's derived rows (`<session>\x1f…`): low, high of `derived_bounds` (each).
# `{c}` is the dialect's byte-order collation: none for SQLite (its default compares bytes),
# `COLLATE "C"` for PostgreSQL, whose database collation may order control characters
# anywhere (a range there would miss rows or take another session's).
DELETE_DERIVED: Final[tuple[LiteralString, ...]] = (
    "DELETE FROM entries WHERE session_id{c} >= ? AND session_id{c} < ?",
    "DELETE FROM runs WHERE session_id{c} >= ? AND session_id{c} < ?",
    "DELETE FROM results WHERE scope{c} >= ? AND scope{c} < ?",
)
POSTGRES_BYTE_ORDER: Final = ' COLLATE "C"'
