"""`PostgresStore.search_transcripts`: PostgreSQL full-text search over transcript text.

The text of an entry's `text` content blocks (`transcript_text(entry)`, a function of the
schema) is kept as a `tsvector` with the `simple` configuration (no stemming, any language,
case folded) in the generated column `transcripts.search`, which PostgreSQL computes on every
append and a GIN index (`transcripts_text_search`) covers (schema version 3). A search matches
every query word (`plainto_tsquery`) through the index, ranks the matches by `ts_rank` of the
stored vector, and builds a `ts_headline` snippet for the best `limit + 1` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .._search import TranscriptHit, TranscriptHits

if TYPE_CHECKING:
    from psycopg import AsyncConnection

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = ["search"]

_QUERY: Final = """
WITH top AS (
    SELECT session_id, seq, entry, ts_rank(search, plainto_tsquery('simple', %(q)s)) AS rank
    FROM transcripts
    WHERE search @@ plainto_tsquery('simple', %(q)s)
      AND (%(all)s OR session_id = ANY(%(sessions)s))
    ORDER BY rank DESC, session_id, seq
    LIMIT %(limit)s
)
SELECT session_id, seq, coalesce(entry::jsonb ->> 'role', ''),
       ts_headline('simple', transcript_text(entry), plainto_tsquery('simple', %(q)s),
                   'StartSel="",StopSel="",MaxWords=24,MinWords=8')
FROM top
ORDER BY rank DESC, session_id, seq
"""


async def search(
    conn: Connection, tokens: Sequence[str], limit: int, sessions: Sequence[str] | None = None
) -> TranscriptHits:
    """The entries holding every token, best first (of `sessions` only, when given)."""
    if not tokens:
        return TranscriptHits(hits=[], engine="postgres", truncated=False)
    params = {"q": " ".join(tokens), "limit": limit + 1, "all": sessions is None,
              "sessions": list(sessions or [])}  # fmt: skip
    cursor = await conn.execute(_QUERY, params)
    rows = await cursor.fetchall()
    hits = [
        TranscriptHit(session_id=str(s), index=int(n), role=str(r), snippet=str(text))
        for s, n, r, text in rows[:limit]
    ]
    return TranscriptHits(hits=hits, engine="postgres", truncated=len(rows) > limit)
