"""`TranscriptSearch`: the optional full-text search a store backend offers over transcripts.

Kept apart from `SessionStore` (a role of its own): `SQLiteStore` implements it with FTS5,
`PostgresStore` with PostgreSQL's text search and `MemoryStore` with a bounded scan of what
it holds. Callers ask the store only (the Control UI's search answers 404 without it); the
sessions tool alone still scans a third-party store that lacks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .._lazy import value_class

__all__ = ["TranscriptHit", "TranscriptHits", "TranscriptSearch"]


@value_class
class TranscriptHit:
    """One matching transcript entry: its session, index, role and a short snippet."""

    session_id: str
    index: int
    role: str
    snippet: str


@value_class
class TranscriptHits:
    """The best hits, the engine that found them, and whether more matched."""

    hits: Sequence[TranscriptHit]
    engine: str
    truncated: bool


@runtime_checkable
class TranscriptSearch(Protocol):
    """A store that searches its transcripts' text itself."""

    async def search_transcripts(
        self, tokens: Sequence[str], *, limit: int, sessions: Sequence[str] | None = None
    ) -> TranscriptHits:
        """Entries whose text holds every token (any case), best first, at most `limit`;
        only of `sessions` when given (filtered in the query, so `truncated` counts only
        their hits)."""
        ...
