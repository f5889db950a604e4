"""`MemoryStore`: a `SessionStore` that lives in this process only.

Used when no store is configured and in tests. Every method runs to completion without
awaiting, so each is atomic on its event loop; it is not meant to be shared between threads.
Nothing survives the process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ClosedError
from ._documents import check_document, encode_entries
from ._errors import TOTAL_MESSAGE, StoreRangeError
from ._records import ParkedRun, SessionInfo, StoredValue

__all__ = ["MemoryStore"]


class MemoryStore:
    """An in-memory `SessionStore`; see the protocol for each method's contract."""

    def __init__(self) -> None:
        self._entries: dict[str, dict[str, StoredValue]] = {}
        self._runs: dict[str, dict[str, ParkedRun]] = {}
        self._transcripts: dict[str, list[str]] = {}
        self._updated: dict[str, float] = {}
        self._documents: dict[str, dict[str, bytes]] = {}
        self._closed = False

    async def __aenter__(self) -> MemoryStore:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _session(self, session_id: str) -> dict[str, StoredValue]:
        self._ensure_open()
        return self._entries.setdefault(session_id, {})

    async def get(self, session_id: str, key: str) -> StoredValue | None:
        return self._session(session_id).get(key)

    async def items(self, session_id: str) -> dict[str, StoredValue]:
        return dict(self._session(session_id))

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        self._session(session_id)[key] = value

    async def delete(self, session_id: str, key: str) -> bool:
        return self._session(session_id).pop(key, None) is not None

    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        proposed = dict(self._session(session_id))
        for key, value in writes.items():
            if value is None:
                proposed.pop(key, None)
            else:
                proposed[key] = value
        if max_total_bytes is not None and _total(proposed) > max_total_bytes:
            raise StoreRangeError(TOTAL_MESSAGE)
        self._entries[session_id] = proposed

    async def save_run(
        self, session_id: str, run_id: str, blob: bytes, meta: Mapping[str, Any]
    ) -> None:
        self._ensure_open()
        detached: dict[str, Any] = json.loads(json.dumps(dict(meta)))
        run = ParkedRun(run_id=run_id, blob=bytes(blob), meta=detached, saved_at=time.time())
        self._runs.setdefault(session_id, {})[run_id] = run

    async def load_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        self._ensure_open()
        return self._runs.get(session_id, {}).get(run_id)

    async def take_run(self, session_id: str, run_id: str) -> ParkedRun | None:
        self._ensure_open()
        return self._runs.get(session_id, {}).pop(run_id, None)

    async def delete_run(self, session_id: str, run_id: str) -> bool:
        return await self.take_run(session_id, run_id) is not None

    async def list_runs(self, session_id: str) -> list[ParkedRun]:
        self._ensure_open()
        runs = sorted(self._runs.get(session_id, {}).values(), key=lambda r: r.saved_at)
        return [
            ParkedRun(run_id=r.run_id, blob=b"", meta=r.meta, saved_at=r.saved_at) for r in runs
        ]

    async def append_transcript(
        self, session_id: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        self._ensure_open()
        encoded = encode_entries(entries)
        if encoded:
            self._transcripts.setdefault(session_id, []).extend(encoded)
            self._updated[session_id] = time.time()

    async def read_transcript(self, session_id: str) -> list[dict[str, Any]]:
        self._ensure_open()
        return [json.loads(text) for text in self._transcripts.get(session_id, [])]

    async def list_sessions(self) -> list[SessionInfo]:
        self._ensure_open()
        infos = [
            SessionInfo(session_id=sid, updated_at=self._updated[sid], entries=len(entries))
            for sid, entries in self._transcripts.items()
        ]
        return sorted(infos, key=lambda info: (-info.updated_at, info.session_id))

    async def put_document(self, ref: str, files: Mapping[str, bytes]) -> None:
        self._ensure_open()
        self._documents[ref] = check_document(ref, files)

    async def get_document_file(self, ref: str, path: str) -> bytes | None:
        self._ensure_open()
        return self._documents.get(ref, {}).get(path)

    async def close(self) -> None:
        """Drop everything; later calls raise `ClosedError`. Idempotent."""
        self._entries.clear()
        self._runs.clear()
        self._transcripts.clear()
        self._updated.clear()
        self._documents.clear()
        self._closed = True

    def _ensure_open(self) -> None:
        if self._closed:
            raise ClosedError("This `MemoryStore` is closed; create a new store.")


def _total(entries: Mapping[str, StoredValue]) -> int:
    return sum(value.bytes for value in entries.values())
