"""`MemoryStore`'s `SessionDirectory` (see `_directory`): a mixin over the store's dicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..._lazy import value_class
from ..._session_ids import derived_bounds
from .._directory import (
    SessionPage,
    SessionRecord,
    check_page,
    check_title,
    decode_cursor,
    default_title,
    encode_cursor,
)
from .._records import ParkedRun, StoredValue
from .._waiting import Waiters

__all__ = ["MemoryDirectory", "MemoryMeta"]


@value_class
class MemoryMeta:
    """A session's title (`None`: none yet), pin and archive flag."""

    title: str | None = None
    pinned: bool = False
    archived: bool = False


class MemoryDirectory:
    """The session list's methods of `MemoryStore`."""

    _entries: dict[str, dict[str, StoredValue]]
    _runs: dict[str, dict[str, ParkedRun]]
    _transcripts: dict[str, list[str]]
    _updated: dict[str, float]
    _meta: dict[str, MemoryMeta]
    _results: dict[tuple[str, str], tuple[str, float | None]]
    _waiters: Waiters

    def _ensure_open(self) -> None:
        raise NotImplementedError  # `MemoryStore` provides it

    def _appended(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Give a session its default title when it has none yet."""
        meta = self._meta.setdefault(session_id, MemoryMeta())
        if meta.title is None and (title := default_title(entries)) is not None:
            self._meta[session_id] = replace(meta, title=title)

    def _record(self, session_id: str) -> SessionRecord | None:
        if session_id not in self._transcripts:
            return None
        meta = self._meta.get(session_id, MemoryMeta())
        return SessionRecord(
            session_id=session_id,
            title=meta.title or "",
            pinned=meta.pinned,
            archived=meta.archived,
            updated_at=self._updated[session_id],
            entries=len(self._transcripts[session_id]),
        )

    async def session_page(
        self, *, query: str = "", archived: bool = False, limit: int = 50, after: str | None = None
    ) -> SessionPage:
        self._ensure_open()
        count, folded = check_page(limit), query.casefold()
        start = decode_cursor(after) if after is not None else None
        chosen: list[tuple[tuple[int, float, str], SessionRecord]] = []
        for session_id in self._transcripts:
            record = self._record(session_id)
            if record is None or record.archived != archived:
                continue
            if folded and folded not in f"{record.title} {session_id}".casefold():
                continue
            key = (-int(record.pinned), -record.updated_at, session_id)
            if start is None or key > (-start[0], -start[1], start[2]):
                chosen.append((key, record))
        chosen.sort(key=lambda pair: pair[0])
        page = [record for _, record in chosen[: count + 1]]
        cursor = encode_cursor(page[count - 1]) if len(page) > count else None
        return SessionPage(sessions=page[:count], next=cursor)

    async def session_record(self, session_id: str) -> SessionRecord | None:
        self._ensure_open()
        return self._record(session_id)

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> SessionRecord | None:
        self._ensure_open()
        name = None if title is None else check_title(title)
        if session_id not in self._transcripts:
            return None
        meta = self._meta.get(session_id, MemoryMeta())
        self._meta[session_id] = MemoryMeta(
            title=meta.title if name is None else name,
            pinned=meta.pinned if pinned is None else pinned,
            archived=meta.archived if archived is None else archived,
        )
        return self._record(session_id)

    async def delete_session(self, session_id: str) -> bool:
        self._ensure_open()
        prefix, _ = derived_bounds(session_id)
        for row in [r for r in self._runs if r == session_id or r.startswith(prefix)]:
            for run_id in self._runs.pop(row):
                self._waiters.notify((row, run_id))  # its followers learn it is gone
        for row in [r for r in self._entries if r == session_id or r.startswith(prefix)]:
            del self._entries[row]
        for key in [k for k in self._results if k[0] == session_id or k[0].startswith(prefix)]:
            del self._results[key]
        for rows in (self._updated, self._meta):
            rows.pop(session_id, None)
        return self._transcripts.pop(session_id, None) is not None
