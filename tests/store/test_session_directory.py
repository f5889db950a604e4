"""The session list of every backend (`SessionDirectory`): titles, pins, archive, search,
bounded pages with a keyset cursor, and deleting a session whole."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell.errors import ConfigurationError, InputError
from clawcell.store import (
    SessionDirectory,
    SessionPage,
    SessionRecord,
    StoredValue,
)

from .conftest import AnyStore, StoreFactory


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": 2}


def run(new_store: StoreFactory, body: Any) -> Any:
    async def main() -> Any:
        async with new_store() as store:
            assert isinstance(store, SessionDirectory)
            return await body(store)

    return asyncio.run(main())


def ids(page: SessionPage) -> list[str]:
    return [record.session_id for record in page.sessions]


def test_a_session_is_titled_by_its_first_user_message_once(new_store: StoreFactory) -> None:
    async def body(store: AnyStore) -> SessionRecord | None:
        await store.append_transcript("s", [user("  Plan the\n  spring   release  "), reply("ok")])
        await store.append_transcript("s", [user("something else entirely")])
        return await store.session_record("s")

    record = run(new_store, body)
    assert record is not None
    assert (record.title, record.pinned, record.archived, record.entries) == (
        "Plan the spring release", False, False, 3,
    )  # fmt: skip


def test_a_long_first_message_is_cut_to_a_one_line_title(new_store: StoreFactory) -> None:
    async def body(store: AnyStore) -> SessionRecord | None:
        await store.append_transcript("s", [user("word " * 40)])
        return await store.session_record("s")

    record = run(new_store, body)
    assert record is not None and len(record.title) == 80 and record.title.endswith("…")


def test_rename_pin_and_archive_are_stored_and_a_rename_outlives_later_messages(
    new_store: StoreFactory,
) -> None:
    async def body(store: AnyStore) -> tuple[Any, ...]:
        await store.append_transcript("s", [reply("hello")])  # no user text: no title yet
        untitled = await store.session_record("s")
        renamed = await store.update_session("s", title="  Budget 2027 ")
        await store.append_transcript("s", [user("first words")])
        pinned = await store.update_session("s", pinned=True)
        archived = await store.update_session("s", archived=True, pinned=False)
        unknown = await store.update_session("nope", title="x")
        return untitled, renamed, pinned, archived, unknown

    untitled, renamed, pinned, archived, unknown = run(new_store, body)
    assert untitled.title == ""
    assert (renamed.title, renamed.pinned) == ("Budget 2027", False)
    assert (pinned.title, pinned.pinned, pinned.archived) == ("Budget 2027", True, False)
    assert (archived.pinned, archived.archived) == (False, True)
    assert unknown is None


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("", "A session title must be one line of 1 to 200 characters, got ''; shorten it or "
             "remove its line breaks."),
        ("a\nb", "A session title must be one line of 1 to 200 characters, got 'a\\nb'; shorten "
                 "it or remove its line breaks."),
        ("x" * 201, "A session title must be one line of 1 to 200 characters"),
    ],
    ids=["empty", "two-lines", "too-long"],
)  # fmt: skip
def test_a_bad_title_is_refused_and_nothing_changes(
    new_store: StoreFactory, title: str, message: str
) -> None:
    async def body(store: AnyStore) -> SessionRecord | None:
        await store.append_transcript("s", [user("kept")])
        with pytest.raises(InputError) as caught:
            await store.update_session("s", title=title, pinned=True)
        assert str(caught.value).startswith(message)
        return await store.session_record("s")

    record = run(new_store, body)
    assert record is not None and (record.title, record.pinned) == ("kept", False)


def test_pages_list_pinned_first_then_newest_and_the_cursor_reaches_every_session_once(
    new_store: StoreFactory,
) -> None:
    async def body(store: AnyStore) -> tuple[list[list[str]], list[str]]:
        for n in range(7):
            await store.append_transcript(f"s{n}", [user(f"topic {n}")])
        await store.update_session("s2", pinned=True)
        pages: list[list[str]] = []
        after: str | None = None
        while True:
            page = await store.session_page(limit=3, after=after)
            pages.append(ids(page))
            if page.next is None:
                break
            after = page.next
            if len(pages) == 1:  # a session appended to between pages moves up, unseen
                await store.append_transcript("s0", [user("again")])
        first = await store.session_page(limit=100)
        return pages, ids(first)

    pages, whole = run(new_store, body)
    assert whole == ["s2", "s0", "s6", "s5", "s4", "s3", "s1"]
    assert pages == [["s2", "s6", "s5"], ["s4", "s3", "s1"]]


def test_search_matches_title_or_id_case_folded_and_archived_sessions_stay_apart(
    new_store: StoreFactory,
) -> None:
    async def body(store: AnyStore) -> tuple[list[str], ...]:
        await store.append_transcript("alpha", [user("Straße Repairs")])
        await store.append_transcript("beta", [user("Groceries")])
        await store.append_transcript("gamma-STRASSE", [user("other")])
        await store.update_session("beta", archived=True)
        found = await store.session_page(query="repairs")
        by_id = await store.session_page(query="gamma")
        active = await store.session_page()
        archived = await store.session_page(archived=True)
        in_archive = await store.session_page(query="groc", archived=True)
        return ids(found), ids(by_id), ids(active), ids(archived), ids(in_archive)

    found, by_id, active, archived, in_archive = run(new_store, body)
    assert (found, by_id) == (["alpha"], ["gamma-STRASSE"])
    assert sorted(active) == ["alpha", "gamma-STRASSE"]
    assert archived == in_archive == ["beta"]


@pytest.mark.parametrize(
    ("limit", "after", "message"),
    [
        (0, None, "`limit` must be a count from 1 to 100, got 0."),
        (101, None, "`limit` must be a count from 1 to 100, got 101."),
        (5, "[1, 2", "`after` must be the `next` cursor of an earlier page, got '[1, 2'; start "
                     "again from the first page."),
        (5, '[7, 1.0, "x"]', "`after` must be the `next` cursor of an earlier page"),
    ],
    ids=["zero", "over-100", "not-json", "bad-key"],
)  # fmt: skip
def test_a_bad_limit_or_cursor_is_refused(
    new_store: StoreFactory, limit: int, after: str | None, message: str
) -> None:
    async def body(store: AnyStore) -> None:
        with pytest.raises(InputError) as caught:
            await store.session_page(limit=limit, after=after)
        assert str(caught.value).startswith(message)

    run(new_store, body)


def test_deleting_a_session_removes_its_transcript_state_and_search_rows(
    new_store: StoreFactory,
) -> None:
    async def body(store: AnyStore) -> tuple[Any, ...]:
        await store.append_transcript("gone", [user("quokka migration plans"), reply("ok")])
        await store.append_transcript("kept", [user("quokka census")])
        await store.put("gone", "k", StoredValue(json="1"))
        await store.save_run("gone", "cm_1", b"snap", {})
        await store.search_transcripts(["quokka"], limit=10)  # builds SQLite's index
        deleted, again = await store.delete_session("gone"), await store.delete_session("gone")
        await store.append_transcript("gone", [user("a fresh start about quokka")])
        found = await store.search_transcripts(["quokka"], limit=10)
        hits = sorted((hit.session_id, hit.index) for hit in found.hits)
        left = (
            await store.read_transcript("gone"),
            await store.get("gone", "k"),
            await store.load_run("gone", "cm_1"),
            await store.session_record("gone"),
        )
        return deleted, again, left, hits

    deleted, again, left, hits = run(new_store, body)
    assert (deleted, again) == (True, False)
    transcript, value, parked, record = left
    assert transcript == [user("a fresh start about quokka")]
    assert (value, parked) == (None, None)
    assert record.title == "a fresh start about quokka" and record.entries == 1
    assert hits == [("gone", 0), ("kept", 0)]


GONE = "a"
# Sessions whose ids sort next to `a`'s derived rows (`a\x1f…`) in one order or another — a
# longer id, the first printable character after the separator, a child session — and the
# store-wide rows, which begin with the separator: none of them is `a`'s.
NEIGHBOURS = ("ab", "a ", "a!", "A", "a/sub/1", "\x1fclawcell\x1flive", "\x1fclawcell\x1fworkers")
DERIVED = ("a\x1flive", "a\x1fturn", "a\x1fsubagents", "a\x1fplay", "a\x1fapprovals")


def test_deleting_a_session_removes_its_derived_rows_and_no_one_elses(
    new_store: StoreFactory,
) -> None:
    async def body(store: AnyStore) -> tuple[Any, ...]:
        for row in (GONE, *NEIGHBOURS, *DERIVED):
            await store.put(row, GONE, StoredValue(json="1"))  # keyed like its session, too
            await store.save_run(row, "live", b"", {})
            await store.put_result(row, "r1", "{}")
        for session in (GONE, *NEIGHBOURS[:5]):
            await store.append_transcript(session, [user(f"hello from {session}")])
        deleted = await store.delete_session(GONE)
        left = {
            row: (
                await store.get(row, GONE) is not None,
                await store.load_run(row, "live") is not None,
                await store.get_result(row, "r1") is not None,
            )
            for row in (GONE, *NEIGHBOURS, *DERIVED)
        }
        sessions = [await store.session_record(s) is not None for s in NEIGHBOURS[:5]]
        return deleted, left, sessions

    deleted, left, sessions = run(new_store, body)
    assert deleted
    assert {row: kept for row, kept in left.items() if row in (GONE, *DERIVED)} == {
        row: (False, False, False) for row in (GONE, *DERIVED)
    }
    assert {row: kept for row, kept in left.items() if row in NEIGHBOURS} == {
        row: (True, True, True) for row in NEIGHBOURS
    }
    assert sessions == [True] * 5


@pytest.mark.parametrize("session_id", ["", "a\x1flive"], ids=["empty", "a-derived-row"])
def test_deleting_a_session_refuses_an_id_that_is_no_session(
    new_store: StoreFactory, session_id: str
) -> None:
    # An empty id's "derived rows" would be every store-wide row.
    async def body(store: AnyStore) -> str:
        await store.put("\x1fclawcell\x1flive", "s", StoredValue(json="1"))
        with pytest.raises(ConfigurationError) as raised:
            await store.delete_session(session_id)
        assert await store.get("\x1fclawcell\x1flive", "s") is not None
        return str(raised.value)

    assert "`session_id`" in run(new_store, body)
