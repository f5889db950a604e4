"""The `SessionStore` backends: one contract, checked on each; SQLite across objects,
threads and processes."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import pytest

import clawcell.store
from clawcell.errors import ClosedError, ConfigurationError
from clawcell.store import (
    DocumentStore,
    EntryStore,
    ResultStore,
    RunStore,
    SessionStore,
    SQLiteStore,
    StoredValue,
    StoreRangeError,
    StoreUnavailableError,
    TranscriptStore,
)
from tests.conftest import in_forked_child

from . import _workers
from .conftest import BACKENDS, StoreFactory

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


ROLES = (EntryStore, RunStore, ResultStore, TranscriptStore, DocumentStore)


def test_backends_satisfy_the_protocol_and_each_role(new_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with new_store() as store:
            assert isinstance(store, SessionStore)
            assert all(isinstance(store, role) for role in ROLES)

    run(scenario())


def test_the_session_store_is_exactly_its_roles_with_sweep_and_close() -> None:
    def methods(protocol: type) -> set[str]:
        return {name for name in vars(protocol) if not name.startswith("_")}

    by_role = [methods(role) for role in ROLES]
    every = set[str]().union(*by_role)
    assert sum(map(len, by_role)) == len(every)  # no method in two roles
    assert methods(SessionStore) == {"sweep", "close"}
    assert set(cast(type, SessionStore).__bases__) == {*ROLES, Protocol}
    assert not hasattr(SessionStore, "take_run")


def test_one_role_is_checked_by_itself() -> None:
    class Documents:
        async def put_document(self, ref: str, files: object) -> None: ...

        async def get_document_file(self, ref: str, path: str) -> bytes | None: ...

    assert isinstance(Documents(), DocumentStore)
    assert not isinstance(Documents(), SessionStore)
    assert not isinstance(Documents(), EntryStore)


def test_the_backend_list_of_the_store_tests_names_every_backend() -> None:
    exported = [getattr(clawcell.store, name) for name in clawcell.store.__all__]
    classes = [v for v in exported if isinstance(v, type) and v is not SessionStore]
    backends = {cls for cls in classes if issubclass(cls, SessionStore)}
    assert backends == set(BACKENDS.values())


def test_entries_round_trip_per_session(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[Any, ...]:
        async with new_store() as store:
            await store.put("s", "a", StoredValue(json='{"é":"🦞"}', network_content=True))
            await store.put("other", "a", StoredValue(json="2"))
            got = await store.get("s", "a")
            deleted = (await store.delete("s", "a"), await store.delete("s", "a"))
            return got, deleted, await store.items("s"), await store.items("other")

    got, deleted, mine, other = run(scenario())

    assert got == StoredValue(json='{"é":"🦞"}', network_content=True)
    assert deleted == (True, False)
    assert mine == {}
    assert other == {"a": StoredValue(json="2")}


def test_apply_over_the_total_writes_nothing(new_store: StoreFactory) -> None:
    async def scenario() -> dict[str, StoredValue]:
        async with new_store() as store:
            await store.apply("s", {"a": StoredValue(json="12345")}, max_total_bytes=10)
            with pytest.raises(StoreRangeError):
                await store.apply(
                    "s",
                    {"a": None, "b": StoredValue(json="123456"), "c": StoredValue(json="12345")},
                    max_total_bytes=10,
                )
            return await store.items("s")

    assert run(scenario()) == {"a": StoredValue(json="12345")}


def test_parked_runs_are_saved_listed_loaded_and_deleted_once(new_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"\x00snapshot", {"deadline": 1.5, "pending": ["a"]})
            await store.save_run("s", "cm_2", b"two", {})
            listed = await store.list_runs("s")
            assert [(r.run_id, r.blob) for r in listed] == [("cm_1", b""), ("cm_2", b"")]
            loaded = await store.load_run("s", "cm_1")
            assert loaded is not None
            assert (loaded.blob, dict(loaded.meta)) == (
                b"\x00snapshot",
                {"deadline": 1.5, "pending": ["a"]},
            )
            assert await store.load_run("other", "cm_1") is None
            for run_id in ("cm_1", "cm_2"):
                deleted = (await store.delete_run("s", run_id), await store.delete_run("s", run_id))
                assert deleted == (True, False)
            assert await store.load_run("s", "cm_1") is None
            assert await store.list_runs("s") == []

    run(scenario())


def test_a_closed_store_fails_clearly(new_store: StoreFactory) -> None:
    async def scenario() -> None:
        store = new_store()
        await store.close()
        await store.close()
        with pytest.raises(ClosedError, match="closed"):
            await store.get("s", "a")

    run(scenario())


def test_sqlite_entries_and_runs_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "state.db"

    async def write() -> None:
        async with SQLiteStore(path) as store:
            await store.apply("s", {"a": StoredValue(json="[1]", network_content=True)})
            await store.save_run("s", "cm_1", b"blob", {"k": "v"})

    async def read() -> tuple[Any, Any]:
        async with SQLiteStore(path) as store:
            return await store.items("s"), await store.load_run("s", "cm_1")

    run(write())
    items, parked = run(read())

    assert items == {"a": StoredValue(json="[1]", network_content=True)}
    assert parked is not None and (parked.blob, dict(parked.meta)) == (b"blob", {"k": "v"})
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_two_sqlite_objects_on_one_file_see_each_others_commits(tmp_path: Path) -> None:
    path = tmp_path / "state.db"

    async def scenario() -> tuple[Any, Any]:
        async with SQLiteStore(path) as first, SQLiteStore(path) as second:
            await first.apply("s", {"a": StoredValue(json="1")})
            seen = await second.get("s", "a")
            await second.apply("s", {"a": None})
            return seen, await first.get("s", "a")

    assert run(scenario()) == (StoredValue(json="1"), None)


def test_sqlite_writers_in_threads_do_not_lose_writes(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    start = threading.Barrier(4)
    failures: list[BaseException] = []

    def writer(prefix: str) -> None:
        async def main() -> None:
            async with SQLiteStore(path) as store:
                start.wait()
                for i in range(25):
                    await store.apply("shared", {f"{prefix}{i}": StoredValue(json=str(i))})

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(p,)) for p in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def count() -> int:
        async with SQLiteStore(path) as store:
            return len(await store.items("shared"))

    assert failures == []
    assert run(count()) == 100


def test_sqlite_writers_in_processes_do_not_lose_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "state.db")
    context = multiprocessing.get_context("spawn")
    with context.Pool(3) as pool:
        pool.starmap(_workers.write_entries, [(path, prefix, 30) for prefix in "xyz"])

    async def count() -> int:
        async with SQLiteStore(path) as store:
            return len(await store.items("shared"))

    assert run(count()) == 90


def test_only_one_process_claims_a_parked_run(tmp_path: Path) -> None:
    path = str(tmp_path / "state.db")

    async def park() -> None:
        async with SQLiteStore(path) as store:
            await store.save_run("shared", "cm_race", b"snapshot", {})

    run(park())
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        winners = pool.starmap(_workers.claim, [(path, "cm_race")] * 4)

    assert sorted(winners) == [False, False, False, True]


def test_concurrent_tasks_share_one_sqlite_store(tmp_path: Path) -> None:
    async def scenario() -> int:
        async with SQLiteStore(tmp_path / "state.db") as store:
            await asyncio.gather(
                *(store.apply("s", {f"k{i}": StoredValue(json=str(i))}) for i in range(50))
            )
            return len(await store.items("s"))

    assert run(scenario()) == 50


def test_a_database_from_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            await store.items("s")

    with pytest.raises(ConfigurationError, match="schema version 99"):
        run(scenario())


def test_an_unusable_database_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database" * 100)

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            await store.items("s")

    with pytest.raises(StoreUnavailableError, match=r"state\.db") as caught:
        run(scenario())
    assert caught.value.code == "store_unavailable"


@pytest.mark.parametrize(
    "kwargs", [{"synchronous": "OFF"}, {"timeout": 0}], ids=["synchronous", "timeout"]
)
def test_bad_sqlite_settings_are_configuration_errors(
    kwargs: dict[str, Any], tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError):
        SQLiteStore(tmp_path / "x.db", **kwargs)


# Python 3.12+ warns about forking a threaded process; forking is the point of this test.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_keeps_using_an_sqlite_store_opened_in_the_parent(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "fork.sqlite")

    async def put(text: str) -> str | None:
        await store.put("s", "k", StoredValue(json=text))
        value = await store.get("s", "k")
        return None if value is None else value.json

    assert asyncio.run(put('"parent"')) == '"parent"'

    def child() -> bytes:  # runs in the forked process
        return (asyncio.run(put('"child"')) or "").encode()

    assert in_forked_child(child) == b'"child"'
    assert asyncio.run(put('"parent again"')) == '"parent again"'


def test_concurrent_commits_are_checked_against_the_total_in_commit_order(
    new_store: StoreFactory,
) -> None:
    async def scenario() -> tuple[int, int]:
        async with new_store() as store:

            async def commit(i: int) -> bool:
                try:
                    await store.apply(
                        "s", {f"k{i}": StoredValue(json="x" * 98)}, max_total_bytes=500
                    )
                except StoreRangeError:
                    return False
                return True

            committed = await asyncio.gather(*(commit(i) for i in range(12)))
            return sum(committed), len(await store.items("s"))

    assert run(scenario()) == (5, 5)


def test_open_store_picks_the_backend_from_the_target(tmp_path: Path) -> None:
    from clawcell.store import PostgresStore, open_store

    sqlite_store = open_store(tmp_path / "a.db")
    postgres_store = open_store("postgresql://u@127.0.0.1/db", schema="mine")
    other = open_store("postgres://u@127.0.0.1/db")

    assert isinstance(sqlite_store, SQLiteStore) and sqlite_store.path == tmp_path / "a.db"
    assert isinstance(postgres_store, PostgresStore) and postgres_store.schema == "mine"
    assert isinstance(other, PostgresStore) and other.schema == "clawcell"
