"""`SQLiteStore.search_transcripts`: an FTS5 index of transcript text, brought up to date lazily.

The index (`transcript_fts`, with `transcript_fts_state` holding how many entries of each
session it has) is created on the first search and extended at each search with the entries
appended since, in one write transaction; the text indexed is an entry's `text` content
blocks, extracted with SQLite's JSON functions. Existing tables are never changed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Final

from ...errors import InputError
from .._errors import UNSTORABLE_MESSAGE
from .._search import TranscriptHit, TranscriptHits
from ._connection import write

__all__ = ["search"]

_SCHEMA: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS transcript_fts USING fts5("
    "session_id UNINDEXED, seq UNINDEXED, role UNINDEXED, body)",
    "CREATE TABLE IF NOT EXISTS transcript_fts_state ("
    "session_id TEXT PRIMARY KEY, indexed INTEGER NOT NULL) WITHOUT ROWID",
)
_CATCH_UP: Final = """
INSERT INTO transcript_fts (session_id, seq, role, body)
SELECT t.session_id, t.seq, coalesce(json_extract(t.entry, '$.role'), ''),
       coalesce((SELECT group_concat(json_extract(c.value, '$.text'), ' ')
                 FROM json_each(t.entry, '$.content') AS c
                 WHERE json_extract(c.value, '$.type') = 'text'), '')
FROM transcripts AS t LEFT JOIN transcript_fts_state AS s ON s.session_id = t.session_id
WHERE t.seq >= coalesce(s.indexed, 0)
"""
_MARK: Final = """
INSERT INTO transcript_fts_state (session_id, indexed) SELECT session_id, entries FROM sessions
WHERE true ON CONFLICT (session_id) DO UPDATE SET indexed = excluded.indexed
"""
_QUERY: Final = """
SELECT session_id, seq, role, snippet(transcript_fts, 3, '', '', '…', 24)
FROM transcript_fts WHERE transcript_fts MATCH ?
  AND (? OR session_id IN (SELECT value FROM json_each(?)))
ORDER BY rank LIMIT ?
"""


def search(
    conn: sqlite3.Connection,
    tokens: Sequence[str],
    limit: int,
    sessions: list[str] | None = None,
) -> TranscriptHits:
    """The entries holding every token, best first (FTS5 `rank`; of `sessions` only, when
    given)."""
    with write(conn):
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(_CATCH_UP)
        conn.execute(_MARK)
    if not tokens:
        return TranscriptHits(hits=[], engine="fts5", truncated=False)
    if any("\x00" in token for token in tokens):
        where, exc = "SQLite full-text search", f"query {' '.join(tokens)!r}"
        raise InputError(UNSTORABLE_MESSAGE.format(where=where, exc=exc))
    match = " ".join('"' + token.replace('"', '""') + '"' for token in tokens)
    only = json.dumps(sessions or [])
    rows = conn.execute(_QUERY, (match, sessions is None, only, limit + 1)).fetchall()
    hits = [
        TranscriptHit(session_id=str(s), index=int(n), role=str(r), snippet=str(text))
        for s, n, r, text in rows[:limit]
    ]
    return TranscriptHits(hits=hits, engine="fts5", truncated=len(rows) > limit)
