"""`PostgresStore.search_transcripts`: PostgreSQL full-text search over transcript text.

The text of an entry's `text` content blocks (`transcript_text(entry)`, a function of the
schema) is turned into a `tsvector` with the `simple` configuration (no stemming, any
language, case folded) and matched against every query word (`plainto_tsquery`), ranked by
`ts_rank`, with a `ts_headline` snippet. The match uses the GIN expression index
`transcripts_text_search` (schema version 3), kept up to date by PostgreSQL on every append;
the query's expression must stay exactly the index's for the planner to use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from ._search import TranscriptHit, TranscriptHits

if TYPE_CHECKING:
    from psycopg import AsyncConnection

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = ["search"]

_QUERY: Final = """
WITH matched AS (
    SELECT t.session_id, t.seq, coalesce(t.entry::jsonb ->> 'role', '') AS role,
           transcript_text(t.entry) AS body, plainto_tsquery('simple', %(q)s) AS query
    FROM transcripts AS t
    WHERE to_tsvector('simple', transcript_text(t.entry)) @@ plainto_tsquery('simple', %(q)s)
)
SELECT session_id, seq, role,
       ts_headline('simple', body, query, 'StartSel="",StopSel="",MaxWords=24,MinWords=8')
FROM matched
ORDER BY ts_rank(to_tsvector('simple', body), query) DESC, session_id, seq
LIMIT %(limit)s
"""


async def search(conn: Connection, tokens: Sequence[str], limit: int) -> TranscriptHits:
    """The entries holding every token, best first."""
    if not tokens:
        return TranscriptHits(hits=[], engine="postgres", truncated=False)
    cursor = await conn.execute(_QUERY, {"q": " ".join(tokens), "limit": limit + 1})
    rows = await cursor.fetchall()
    hits = [
        TranscriptHit(session_id=str(s), index=int(n), role=str(r), snippet=str(text))
        for s, n, r, text in rows[:limit]
    ]
    return TranscriptHits(hits=hits, engine="postgres", truncated=len(rows) > limit)
