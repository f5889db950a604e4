"""The reply a running turn has streamed so far, kept in the store for any worker to show.

A page reloaded mid-turn (on any worker) renders the stored transcript, which holds a model
call's text only once the call ends. So while the model streams, the turn also keeps its text
so far as one entry of the derived session `<session>\\x1fturn` (key `partial`): written when
the text grew and at least `EVERY` seconds after the last write (bounded writes: about one a
second however fast the model streams), capped at `MAX_CHARS`, and deleted when the text is
stored in the transcript (the call ended, the turn stopped or failed). A worker that dies
mid-reply leaves it behind; the session's next turn stores it in the message that ends the
interrupted turn (`Agent`).
"""

from __future__ import annotations

import json
import time
from typing import Final

from ..store import EntryStore, StoredValue

__all__ = ["EVERY", "MAX_CHARS", "PartialReply", "read_partial"]

EVERY: Final = 1.0
"""Seconds between two writes of one turn's partial reply, at least."""
MAX_CHARS: Final = 65_536
"""Characters of a partial reply kept (the start; the final message keeps all of it)."""
_SUFFIX: Final = "\x1fturn"
_KEY: Final = "partial"


class PartialReply:
    """The partial reply of one turn; a no-op on a store without entries."""

    def __init__(self, store: object, session_id: str, turn_id: str) -> None:
        self._store = store if isinstance(store, EntryStore) else None
        self._row = session_id + _SUFFIX
        self._turn_id = turn_id
        self._written = 0  # characters in the store
        self._last = 0.0

    async def update(self, parts: list[str]) -> None:
        """Store the text so far when it grew and the last write is `EVERY` seconds old."""
        now = time.monotonic()
        # Full (the start is kept) or written less than `EVERY` ago: nothing to do, and
        # nothing read, so a long reply's deltas cost the same as a short one's.
        if self._store is None or self._written >= MAX_CHARS or now - self._last < EVERY:
            return
        self._last = now
        text = _head(parts, MAX_CHARS)
        if len(text) <= self._written:
            return
        value = json.dumps({"turnId": self._turn_id, "text": text}, ensure_ascii=False)
        await self._store.put(self._row, _KEY, StoredValue(json=value))
        self._written = len(text)

    async def clear(self) -> None:
        """The text is in the transcript now (or was dropped): forget the stored copy."""
        if self._store is not None and self._written:
            await self._store.delete(self._row, _KEY)
            self._written = 0


def _head(parts: list[str], limit: int) -> str:
    """The first `limit` characters of the parts, joining only the parts that hold them."""
    taken: list[str] = []
    size = 0
    for part in parts:
        if size >= limit:
            break
        taken.append(part)
        size += len(part)
    return "".join(taken)[:limit]


async def read_partial(store: object, session_id: str, *, clear: bool = False) -> str | None:
    """The partial reply stored for the session's running (or interrupted) turn; with
    `clear`, it is deleted as it is read."""
    if not isinstance(store, EntryStore):
        return None
    row = session_id + _SUFFIX
    stored = await store.get(row, _KEY)
    if stored is None:
        return None
    if clear:
        await store.delete(row, _KEY)
    try:
        text = json.loads(stored.json).get("text")
    except (ValueError, AttributeError):
        return None
    return text if isinstance(text, str) and text else None
