"""`MemoryStore.search_transcripts`: the memory store answers the same `TranscriptSearch` as the
durable backends, by a bounded scan of the transcripts it holds."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from clawcell.store import MemoryStore, TranscriptHits, TranscriptSearch


class Clock:
    """A controlled `time` for the store: each reading is one second later, so the order
    of appends is the order of `updated_at`, never a tie."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("clawcell.store._memory._store.time", Clock())


def entry(role: str, *texts: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": t} for t in texts], **extra}


def search(
    transcripts: dict[str, list[dict[str, Any]]],
    tokens: Sequence[str],
    *,
    limit: int = 20,
    sessions: Sequence[str] | None = None,
) -> TranscriptHits:
    async def main() -> TranscriptHits:
        async with MemoryStore() as store:
            for session_id, entries in transcripts.items():
                await store.append_transcript(session_id, entries)
            return await store.search_transcripts(tokens, limit=limit, sessions=sessions)

    return asyncio.run(main())


def found(hits: TranscriptHits) -> list[tuple[str, int, str]]:
    return [(hit.session_id, hit.index, hit.role) for hit in hits.hits]


def test_the_memory_store_is_a_transcript_search() -> None:
    assert isinstance(MemoryStore(), TranscriptSearch)


def test_an_entry_matches_when_its_text_holds_every_token_in_any_case() -> None:
    hits = search(
        {"a": [entry("user", "Where do QUOKKAS migrate?"), entry("assistant", "quokkas stay")]},
        ["quokkas", "migrate"],
    )
    assert (found(hits), hits.engine, hits.truncated) == ([("a", 0, "user")], "scan", False)


def test_only_text_blocks_are_searched() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"code": "quokka"}}
    hidden = {"role": "assistant", "content": [{"type": "thinking", "thinking": "quokka"}, call]}
    assert found(search({"a": [hidden], "b": [entry("user", "a quokka")]}, ["quokka"])) == [
        ("b", 0, "user")
    ]


def test_text_that_json_escapes_is_found_as_written() -> None:
    text = 'open C:\\temp\\"quokka" now\nplease'
    hits = search({"a": [entry("user", text)]}, ['c:\\temp\\"quokka"', "please"])
    assert found(hits) == [("a", 0, "user")]


def test_words_of_two_blocks_do_not_run_together() -> None:
    two = entry("user", "quokka", "island")
    assert found(search({"a": [two]}, ["quokkaisland"])) == []
    assert found(search({"a": [two]}, ["quokka", "island"])) == [("a", 0, "user")]


def test_only_the_given_sessions_are_searched_and_counted() -> None:
    transcripts = {s: [entry("user", "quokka")] for s in ("a", "b", "c")}
    hits = search(transcripts, ["quokka"], limit=1, sessions=["b"])
    assert (found(hits), hits.truncated) == ([("b", 0, "user")], False)


def test_the_most_recently_updated_session_comes_first_and_more_hits_are_truncated() -> None:
    async def main() -> TranscriptHits:
        async with MemoryStore() as store:
            await store.append_transcript("old", [entry("user", "quokka one")])
            await store.append_transcript("new", [entry("user", "quokka two")])
            await store.append_transcript("new", [entry("assistant", "quokka three")])
            return await store.search_transcripts(["quokka"], limit=2)

    hits = asyncio.run(main())
    assert (found(hits), hits.truncated) == ([("new", 0, "user"), ("new", 1, "assistant")], True)


def test_no_tokens_find_nothing() -> None:
    assert found(search({"a": [entry("user", "quokka")]}, [])) == []


def test_the_snippet_is_the_text_around_the_first_token_on_one_line() -> None:
    text = "x" * 100 + " the   quokka\nmigrates " + "y" * 300
    (hit,) = search({"a": [entry("user", text)]}, ["QUOKKA"]).hits
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert "the quokka migrates" in hit.snippet
    assert len(hit.snippet) <= 162


def test_a_short_text_is_its_own_snippet() -> None:
    (hit,) = search({"a": [entry("user", "a quokka")]}, ["quokka"]).hits
    assert hit.snippet == "a quokka"


def test_the_scan_stops_after_its_bound_and_says_more_may_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("clawcell.store._memory._search.MAX_SCANNED", 3)
    # "b" is appended first, so the three newer entries of "a" use up the bound.
    transcripts = {"b": [entry("user", "quokka")], "a": [entry("user", "no")] * 3}
    hits = search(transcripts, ["quokka"])
    assert (found(hits), hits.truncated) == ([], True)
