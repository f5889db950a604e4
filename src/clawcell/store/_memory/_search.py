"""`MemoryStore.search_transcripts`: a bounded scan of the transcripts one process holds.

The memory store keeps no index, so a search reads its transcripts: the most recently
updated session first, each session's entries in order, keeping the entries whose text
(`transcript_text`) holds every token, case-folded. That is the match of the durable
backends' indexes without their ranking. It stops at `limit` hits, or after `MAX_SCANNED`
entries, and says `truncated` either way (more may match).

Entries are kept as compact JSON with non-ASCII left as is (`encode_entries`), so a token
that JSON writes unescaped (no quote, backslash or control character) can only match an
entry whose JSON text holds it: the scan parses just those entries.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final, cast

from .._search import TranscriptHit, TranscriptHits
from .._transcript_text import transcript_text

__all__ = ["MAX_SCANNED", "search"]

MAX_SCANNED: Final = 200_000
"""Entries one search reads at most (the bound of the sessions tool's scan)."""
_SNIPPET: Final = 160
_BEFORE: Final = 40


def search(
    transcripts: Iterable[tuple[str, Sequence[str]]], tokens: Sequence[str], limit: int
) -> TranscriptHits:
    """The entries of `transcripts` (session id, encoded entries; most recent first) whose
    text holds every token."""
    folded = [token.casefold() for token in tokens]
    if not folded:
        return TranscriptHits(hits=[], engine="scan", truncated=False)
    plain = all(json.dumps(token, ensure_ascii=False)[1:-1] == token for token in folded)
    hits: list[TranscriptHit] = []
    scanned = 0
    for session_id, encoded in transcripts:
        for index, raw in enumerate(encoded):
            scanned += 1
            if scanned > MAX_SCANNED:
                return TranscriptHits(hits=hits, engine="scan", truncated=True)
            if plain and not _holds(raw.casefold(), folded):
                continue
            hit = _hit(session_id, index, cast(dict[str, Any], json.loads(raw)), folded)
            if hit is None:
                continue
            if len(hits) == limit:
                return TranscriptHits(hits=hits, engine="scan", truncated=True)
            hits.append(hit)
    return TranscriptHits(hits=hits, engine="scan", truncated=False)


def _holds(text: str, tokens: Sequence[str]) -> bool:
    return all(token in text for token in tokens)


def _hit(
    session_id: str, index: int, entry: dict[str, Any], tokens: Sequence[str]
) -> TranscriptHit | None:
    text = transcript_text(entry)
    folded = text.casefold()
    if not _holds(folded, tokens):
        return None
    snippet = _snippet(text, folded, tokens[0])
    role = str(entry.get("role", ""))
    return TranscriptHit(session_id=session_id, index=index, role=role, snippet=snippet)


def _snippet(text: str, folded: str, token: str) -> str:
    """About `_SNIPPET` characters around the first token, on one line, with `…` where cut.
    (Case folding can change a text's length, so the window is found in the folded text and
    only approximately lines up with the original; a snippet is a hint, not a quote.)"""
    start = max(0, folded.find(token) - _BEFORE)
    end = start + _SNIPPET
    shown = " ".join(text[start:end].split())
    return ("…" if start else "") + shown + ("…" if end < len(text) else "")
