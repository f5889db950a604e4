"""Text a backend cannot hold (a NUL, a lone surrogate) is the caller's input: every store
operation either keeps it or refuses it with `InputError` (`invalid_input`), never
`store_unavailable` nor a raw `UnicodeEncodeError` (every backend, job stores included)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from clawcell.errors import InputError
from clawcell.store import JobRecord, SessionStore, TranscriptSearch, job_store_for

StoreFactory = Callable[[], SessionStore]
TEXTS = {"nul": "a\x00b", "surrogate": "a\ud800b"}


def operations(store: SessionStore, text: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    jobs = job_store_for(store)
    found: dict[str, Callable[[], Awaitable[Any]]] = {
        "read_transcript": lambda: store.read_transcript(text),
        "append_transcript": lambda: store.append_transcript("s", [{"text": text}]),
        "get": lambda: store.get(text, "k"),
        "put_result": lambda: store.put_result(text, "r", "{}"),
        "save_job": lambda: jobs.save_job(JobRecord(id="job_1", spec={"name": text})),
        "get_job": lambda: jobs.get_job(text),
    }
    if isinstance(store, TranscriptSearch):
        found["search_transcripts"] = lambda: store.search_transcripts([text], limit=5)
    return found


@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_unstorable_text_is_kept_or_refused_as_invalid_input(
    new_store: StoreFactory, kind: str
) -> None:
    async def main() -> dict[str, str]:
        store = new_store()
        outcomes: dict[str, str] = {}
        try:
            for name, operation in operations(store, TEXTS[kind]).items():
                try:
                    await operation()
                    outcomes[name] = "kept"
                except InputError as exc:
                    assert "cannot store or search text with a NUL character" in exc.message
                    outcomes[name] = exc.code
        finally:
            await store.close()
        return outcomes

    outcomes = asyncio.run(main())
    assert set(outcomes.values()) <= {"kept", "invalid_input"}, outcomes
    assert len(outcomes) >= 6
