"""`sessions_search`: the store's own full-text search when it has one, a bounded scan otherwise."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ...store import SessionStore, TranscriptSearch

__all__ = ["search_transcripts"]

_SCAN_MESSAGES: Final = 200_000
_SNIPPET: Final = 160


async def search_transcripts(
    store: SessionStore,
    query: str,
    *,
    visible: Callable[[str], bool],
    limit: int,
    text_of: Callable[[Mapping[str, Any]], str],
) -> tuple[list[dict[str, Any]], str, bool]:
    """Hits (`sessionId`, `index`, `role`, `snippet`), the engine used, and whether cut."""
    tokens = query.lower().split()
    if isinstance(store, TranscriptSearch):
        # Filtered in the query: hidden sessions' hits neither crowd out the caller's own
        # nor show in `truncated`.
        shown = [info.session_id for info in await store.list_sessions()]
        found = await store.search_transcripts(
            tokens, limit=limit, sessions=[s for s in shown if visible(s)]
        )
        hits = [
            {"sessionId": h.session_id, "index": h.index, "role": h.role, "snippet": h.snippet}
            for h in found.hits
            if visible(h.session_id)  # a session that appeared since the list: not shown
        ]
        return hits, found.engine, found.truncated
    return await _scan(store, tokens, visible=visible, limit=limit, text_of=text_of)


async def _scan(
    store: SessionStore,
    tokens: list[str],
    *,
    visible: Callable[[str], bool],
    limit: int,
    text_of: Callable[[Mapping[str, Any]], str],
) -> tuple[list[dict[str, Any]], str, bool]:
    hits: list[dict[str, Any]] = []
    scanned = 0
    for info in await store.list_sessions():
        if not visible(info.session_id):
            continue
        for index, entry in enumerate(await store.read_transcript(info.session_id)):
            scanned += 1
            text = text_of(entry)
            lowered = text.lower()
            if tokens and all(token in lowered for token in tokens):
                if len(hits) == limit:
                    return hits, "scan", True
                at = lowered.find(tokens[0])
                start = max(0, at - _SNIPPET // 2)
                hits.append(
                    {"sessionId": info.session_id, "index": index,
                     "role": str(entry.get("role", "")),
                     "snippet": " ".join(text[start : start + _SNIPPET].split())}
                )  # fmt: skip
        if scanned >= _SCAN_MESSAGES:
            return hits, "scan", True
    return hits, "scan", False
