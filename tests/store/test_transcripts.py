"""Transcripts and hosted canvas documents, the same contract on every backend."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from clawcell.errors import ClosedError, InputError
from clawcell.store import SessionInfo, StoredValue

from .conftest import StoreFactory


def test_transcript_entries_are_read_back_in_append_order(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with new_store() as store:
            await store.append_transcript("s", [{"role": "user", "text": "hé 🦞"}])
            await store.append_transcript("s", [{"n": 1}, {"n": 2, "nested": {"a": [1, None]}}])
            await store.append_transcript("other", [{"n": 0}])
            return await store.read_transcript("s"), await store.read_transcript("unknown")

    mine, unknown = asyncio.run(scenario())

    assert mine == [
        {"role": "user", "text": "hé 🦞"},
        {"n": 1},
        {"n": 2, "nested": {"a": [1, None]}},
    ]
    assert unknown == []


def test_sessions_are_listed_most_recently_updated_first(new_store: StoreFactory) -> None:
    async def scenario() -> list[SessionInfo]:
        async with new_store() as store:
            await store.append_transcript("first", [{"n": 1}])
            await store.append_transcript("second", [{"n": 1}, {"n": 2}])
            await store.append_transcript("first", [{"n": 2}, {"n": 3}])
            await store.append_transcript("empty", [])
            await store.put("entries-only", "k", StoredValue(json="1"))
            return await store.list_sessions()

    listed = asyncio.run(scenario())

    assert [(info.session_id, info.entries) for info in listed] == [("first", 3), ("second", 2)]
    assert listed[0].updated_at >= listed[1].updated_at > 0


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        pytest.param(["not", "an", "object"], "must be a JSON object", id="list"),
        pytest.param({"x": {1, 2}}, "is not JSON-serialisable", id="set"),
        pytest.param({"x": math.nan}, "is not JSON-serialisable", id="nan"),
    ],
)
def test_a_bad_transcript_entry_appends_nothing(
    new_store: StoreFactory, entry: Any, problem: str
) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with new_store() as store:
            with pytest.raises(InputError, match=f"transcript entry 1 {problem}"):
                await store.append_transcript("s", [{"ok": True}, entry])
            return await store.read_transcript("s")

    assert asyncio.run(scenario()) == []


def test_concurrent_appends_keep_each_batch_together(new_store: StoreFactory) -> None:
    async def scenario() -> list[dict[str, Any]]:
        async with new_store() as store:
            await asyncio.gather(
                *(
                    store.append_transcript("s", [{"b": b, "i": i} for i in range(3)])
                    for b in range(8)
                )
            )
            return await store.read_transcript("s")

    entries = asyncio.run(scenario())

    batches = [entries[i : i + 3] for i in range(0, len(entries), 3)]
    assert len(entries) == 24
    assert all([e["i"] for e in batch] == [0, 1, 2] for batch in batches)
    assert sorted(batch[0]["b"] for batch in batches) == list(range(8))


def test_documents_are_stored_whole_and_replaced_whole(new_store: StoreFactory) -> None:
    async def scenario() -> list[bytes | None]:
        async with new_store() as store:
            await store.put_document("doc", {"index.html": b"<p>1</p>", "assets/a.js": b"\x00js"})
            first = [
                await store.get_document_file("doc", "index.html"),
                await store.get_document_file("doc", "assets/a.js"),
            ]
            await store.put_document("doc", {"index.html": b"<p>2</p>"})
            return [
                *first,
                await store.get_document_file("doc", "index.html"),
                await store.get_document_file("doc", "assets/a.js"),
                await store.get_document_file("unknown", "index.html"),
            ]

    assert asyncio.run(scenario()) == [b"<p>1</p>", b"\x00js", b"<p>2</p>", None, None]


@pytest.mark.parametrize("path", ["../index.html", "/index.html", "a//b", "./index.html"])
def test_a_path_outside_the_document_is_not_found(new_store: StoreFactory, path: str) -> None:
    async def scenario() -> bytes | None:
        async with new_store() as store:
            await store.put_document("doc", {"index.html": b"x"})
            return await store.get_document_file("doc", path)

    assert asyncio.run(scenario()) is None


@pytest.mark.parametrize(
    ("ref", "files", "message"),
    [
        pytest.param(
            "doc",
            {"app.js": b"x"},
            "document 'doc' has no `index.html`; include it with the other files (got ['app.js']).",
            id="no-index",
        ),
        pytest.param(
            "doc",
            {"index.html": b"x", "../evil": b"x"},
            "document file path '../evil' must be a relative path like `assets/app.js` "
            "with no empty, `.` or `..` segments and no backslashes.",
            id="dot-dot",
        ),
        pytest.param(
            "doc",
            {"index.html": "text"},
            "document file 'index.html' must be bytes, got str.",
            id="str-data",
        ),
        pytest.param(
            "", {"index.html": b"x"}, "document ref must be a non-empty string, got ''.", id="ref"
        ),
    ],
)
def test_a_bad_document_is_refused_and_the_old_one_kept(
    new_store: StoreFactory, ref: str, files: Any, message: str
) -> None:
    async def scenario() -> bytes | None:
        async with new_store() as store:
            await store.put_document("doc", {"index.html": b"old"})
            with pytest.raises(InputError) as caught:
                await store.put_document(ref, files)
            assert caught.value.message == message
            return await store.get_document_file("doc", "index.html")

    assert asyncio.run(scenario()) == b"old"


def test_transcripts_and_documents_survive_reopening(new_durable_store: StoreFactory) -> None:
    async def write() -> None:
        async with new_durable_store() as store:
            await store.append_transcript("s", [{"n": 1}])
            await store.put_document("doc", {"index.html": b"x"})

    async def read() -> tuple[Any, ...]:
        async with new_durable_store() as store:
            return (
                await store.read_transcript("s"),
                await store.get_document_file("doc", "index.html"),
                [info.entries for info in await store.list_sessions()],
            )

    asyncio.run(write())
    assert asyncio.run(read()) == ([{"n": 1}], b"x", [1])


def test_a_closed_store_refuses_transcripts_and_documents(new_store: StoreFactory) -> None:
    async def scenario() -> None:
        store = new_store()
        await store.close()
        with pytest.raises(ClosedError):
            await store.read_transcript("s")
        with pytest.raises(ClosedError):
            await store.list_sessions()
        with pytest.raises(ClosedError):
            await store.get_document_file("doc", "index.html")

    asyncio.run(scenario())
