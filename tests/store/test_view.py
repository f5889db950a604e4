"""`SessionView`: the guest-facing `store`/`load` semantics of spec §10.2."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

import pytest

import clawcell.store
from clawcell.errors import ClosedError
from clawcell.store import MemoryStore, SessionView, StoredValue, StoreRangeError, StoreTypeError
from clawcell.store._view import PERSISTENCE_WARNING

T = TypeVar("T")
KEY_MESSAGE = "Code Mode store key must be a non-empty string of at most 256 characters."
VALUE_MESSAGE = "Code Mode store value exceeds 256 KiB of serialized JSON."
TOTAL_MESSAGE = "Code Mode store exceeds 1 MiB of serialized JSON; delete keys or store less data."


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def test_the_public_surface_is_deliberate() -> None:
    # isort-style order, as ruff keeps it: constants first, then classes.
    assert clawcell.store.__all__ == sorted(
        clawcell.store.__all__, key=lambda n: (not n.isupper(), n)
    )
    assert set(clawcell.store.__all__) == {
        "ClaimedRun",
        "FirstWriter",
        "JobRecord",
        "JobRun",
        "JobStore",
        "MemoryJobStore",
        "PostgresJobStore",
        "SQLiteJobStore",
        "StateKeys",
        "TranscriptHit",
        "TranscriptHits",
        "TranscriptSearch",
        "cancel_requested",
        "configured_state_keys",
        "job_store_for",
        "state_keys_for",
        "transcript_text",
        "DocumentStore",
        "EntryStore",
        "Lease",
        "LeaseKeeper",
        "MemoryStore",
        "ParkedRun",
        "PostgresStore",
        "ResultStore",
        "RunStore",
        "SessionDirectory",
        "SessionInfo",
        "SessionPage",
        "SessionRecord",
        "SQLiteStore",
        "SessionStore",
        "SessionTurns",
        "SessionView",
        "StaleRunError",
        "StoreRangeError",
        "StoreTypeError",
        "StoreUnavailableError",
        "StoredValue",
        "SweepReport",
        "TranscriptStore",
        "TurnHold",
        "open_store",
    }


def test_a_cell_reads_its_own_writes_before_commit() -> None:
    async def scenario() -> tuple[Any, ...]:
        store = MemoryStore()
        await store.put("s", "kept", StoredValue(json='"old"'))
        await store.put("s", "gone", StoredValue(json="1"))
        view = SessionView(store, "s")
        await view.store("kept", '"new"')
        await view.store("gone", None)
        await view.store("fresh", "[1]")
        seen = (await view.load("kept"), await view.load("gone"), await view.load("fresh"))
        committed = (await store.get("s", "kept"), await store.get("s", "fresh"))
        return seen, committed

    seen, committed = run(scenario())

    assert seen == ('"new"', None, "[1]")
    assert committed == (StoredValue(json='"old"'), None)


def test_commit_applies_the_whole_write_set() -> None:
    async def scenario() -> tuple[str | None, dict[str, StoredValue]]:
        store = MemoryStore()
        await store.put("s", "gone", StoredValue(json="1"))
        view = SessionView(store, "s")
        await view.store("a", '{"x":1}', network_content=True)
        await view.store("gone", None)
        warning = await view.commit()
        return warning, await store.items("s")

    warning, items = run(scenario())

    assert warning is None
    assert items == {"a": StoredValue(json='{"x":1}', network_content=True)}


def test_a_discarded_cell_leaves_the_store_unchanged() -> None:
    async def scenario() -> dict[str, StoredValue]:
        store = MemoryStore()
        view = SessionView(store, "s")
        await view.store("a", "1")
        view.discard()
        view.discard()
        return await store.items("s")

    assert run(scenario()) == {}


def test_a_closed_view_refuses_store_and_load() -> None:
    async def scenario() -> list[str]:
        view = SessionView(MemoryStore(), "s")
        await view.commit()
        messages: list[str] = []
        for action in (view.load("a"), view.store("a", "1")):
            with pytest.raises(ClosedError) as caught:
                await action
            messages.append(caught.value.message)
        assert await view.commit() is None
        return messages

    assert run(scenario()) == ["Code Mode store/load is unavailable after the cell closed."] * 2


@pytest.mark.parametrize(
    "key",
    ["", "k" * 257, "🦞" * 129, 42, None, ["a"]],
    ids=["empty", "257", "utf16", "int", "none", "list"],
)
def test_bad_keys_are_type_errors(key: object) -> None:
    async def scenario() -> list[StoreTypeError]:
        view = SessionView(MemoryStore(), "s")
        errors: list[StoreTypeError] = []
        for action in (view.load(key), view.store(key, "1")):
            with pytest.raises(StoreTypeError) as caught:
                await action
            errors.append(caught.value)
        return errors

    for error in run(scenario()):
        assert error.message == KEY_MESSAGE
        assert error.code == "store_type"
        assert isinstance(error, TypeError)


@pytest.mark.parametrize("key", ["k", "k" * 256, "🦞" * 128], ids=["one", "256", "utf16-256"])
def test_keys_up_to_256_characters_are_accepted(key: str) -> None:
    async def scenario() -> str | None:
        view = SessionView(MemoryStore(), "s")
        await view.store(key, "true")
        return await view.load(key)

    assert run(scenario()) == "true"


def test_a_value_over_256_kib_is_a_range_error_and_changes_nothing() -> None:
    limit = 256 * 1024
    fits = '"' + "x" * (limit - 2) + '"'

    async def scenario() -> tuple[StoreRangeError, str | None]:
        view = SessionView(MemoryStore(), "s")
        await view.store("a", fits)
        with pytest.raises(StoreRangeError) as caught:
            await view.store("a", '"' + "x" * (limit - 1) + '"')
        return caught.value, await view.load("a")

    error, kept = run(scenario())

    assert (error.message, error.code) == (VALUE_MESSAGE, "store_range")
    assert kept == fits


def test_the_total_counts_committed_entries_and_buffered_writes() -> None:
    quarter = '"' + "x" * (256 * 1024 - 2) + '"'

    async def scenario() -> tuple[str, str | None]:
        store = MemoryStore()
        for key in ("a", "b"):
            await store.put("s", key, StoredValue(json=quarter))
        view = SessionView(store, "s")
        await view.store("c", quarter)
        await view.store("d", quarter)
        with pytest.raises(StoreRangeError) as caught:
            await view.store("e", "1")
        await view.store("a", None)  # a delete frees room within the cell
        await view.store("e", "1")
        return caught.value.message, await view.load("e")

    assert run(scenario()) == (TOTAL_MESSAGE, "1")


def test_concurrent_cells_recheck_the_total_in_commit_order() -> None:
    half = '"' + "x" * (256 * 1024 - 2) + '"'

    async def scenario() -> tuple[str | None, str | None, set[str]]:
        store = MemoryStore()
        first, second = SessionView(store, "s"), SessionView(store, "s")
        for view, prefix in ((first, "a"), (second, "b")):
            for i in range(3):
                await view.store(f"{prefix}{i}", half)
        return await first.commit(), await second.commit(), set(await store.items("s"))

    first, second, keys = run(scenario())

    assert first is None
    assert second == PERSISTENCE_WARNING
    assert keys == {"a0", "a1", "a2"}


class FailingStore(MemoryStore):
    async def apply(
        self,
        session_id: str,
        writes: Mapping[str, StoredValue | None],
        *,
        max_total_bytes: int | None = None,
    ) -> None:
        raise OSError("disk full")


def test_an_unconfirmed_commit_completes_with_the_warning(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[str | None, dict[str, StoredValue]]:
        store = FailingStore()
        view = SessionView(store, "s")
        await view.store("a", "1")
        return await view.commit(), await store.items("s")

    warning, items = run(scenario())

    assert warning == (
        "Code Mode session store persistence could not be confirmed. The cell completed; "
        "verify the session transcript before relying on these values in a later cell or reply."
    )
    assert items == {}
    assert "disk full" in caplog.text


def test_a_parked_cell_resumes_with_its_buffered_writes() -> None:
    async def scenario() -> tuple[str | None, str | None]:
        store = MemoryStore()
        before = SessionView(store, "s")
        await before.store("a", "[1]")
        await before.store("b", None)
        after = SessionView(store, "s", writes=before.writes)
        seen = await after.load("a")
        await after.commit()
        return seen, (await store.get("s", "a") or StoredValue(json="missing")).json

    assert run(scenario()) == ("[1]", "[1]")


def test_views_of_other_sessions_do_not_see_each_other() -> None:
    async def scenario() -> str | None:
        store = MemoryStore()
        mine = SessionView(store, "mine")
        await mine.store("a", "1")
        await mine.commit()
        return await SessionView(store, "other").load("a")

    assert run(scenario()) is None
