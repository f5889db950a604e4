"""`PostgresStore` specifics: lazy export, a missing driver, bad settings, schema versions."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg
import pytest
from psycopg import sql

import clawcell
from clawcell.errors import ConfigurationError, StoreUnavailableError
from clawcell.store import PostgresStore, StoredValue
from clawcell.store._waiting import Poll, wait_for_revision


def test_the_package_root_exports_postgres_store_lazily() -> None:
    # Resolved by the package's `__getattr__`, which pyright cannot see through.
    assert clawcell.PostgresStore is PostgresStore  # pyright: ignore[reportAttributeAccessIssue]
    assert "PostgresStore" not in clawcell.__all__


def test_a_missing_driver_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)

    with pytest.raises(ConfigurationError) as caught:
        PostgresStore("postgresql://localhost/x")

    assert caught.value.message == (
        "`PostgresStore` needs psycopg 3 with its pool, which is not installed; "
        "install it with `pip install 'clawcell[postgres]'` (in a clawcell checkout: "
        "`.venv/bin/pip install -e '.[postgres]'`)."
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param(
            {"schema": "Bad-Name"},
            "`schema` must be 1–40 lower-case letters, digits or `_` (not starting with a "
            "digit), got 'Bad-Name'.",
            id="schema",
        ),
        pytest.param(
            {"min_size": 3, "max_size": 2},
            "pool sizes need 1 ≤ `min_size` ≤ `max_size`, got 3 and 2.",
            id="sizes",
        ),
        pytest.param({"timeout": 0}, "`timeout` must be positive, got 0.", id="timeout"),
    ],
)
def test_bad_postgres_settings_are_configuration_errors(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        # Wrong types on purpose: the constructor must refuse them.
        PostgresStore("postgresql://localhost/x", **kwargs)  # pyright: ignore[reportArgumentType]
    assert caught.value.message == message


def test_an_unreachable_server_is_a_store_error_and_hides_the_password() -> None:
    async def scenario() -> None:
        dsn = "postgresql://someone:hunter2@127.0.0.1:1/db"
        async with PostgresStore(dsn, timeout=1) as store:
            await store.get("s", "k")

    with pytest.raises(StoreUnavailableError) as caught:
        asyncio.run(scenario())
    assert caught.value.message.startswith("Session store PostgreSQL schema 'clawcell' failed: ")
    assert "hunter2" not in caught.value.message


def test_the_schema_is_versioned_and_a_newer_one_is_refused(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def versions() -> tuple[int, int]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            await store.put("s", "k", StoredValue(json="1"))
            return await store.upgrade()

    assert asyncio.run(versions()) == (0, 4)
    assert asyncio.run(versions()) == (4, 4)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        table = sql.Identifier(postgres_schema, "schema_version")
        conn.execute(sql.SQL("INSERT INTO {} VALUES (99, 0)").format(table))
    with pytest.raises(ConfigurationError, match="has schema version 99, newer than"):
        asyncio.run(versions())


def test_workers_opening_a_new_schema_together_migrate_it_once(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def scenario() -> list[tuple[int, int]]:
        stores = [PostgresStore(postgres_dsn, schema=postgres_schema) for _ in range(4)]
        try:
            return list(await asyncio.gather(*(store.upgrade() for store in stores)))
        finally:
            for store in stores:
                await store.close()

    found = asyncio.run(scenario())

    assert sorted(found) == [(0, 4), (4, 4), (4, 4), (4, 4)]


def test_run_changes_are_notified_with_ids_only(postgres_dsn: str, postgres_schema: str) -> None:
    async def scenario() -> list[str]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            await store.upgrade()
            listener = await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True)
            async with listener:
                channel = sql.Identifier(f"{postgres_schema}_runs")
                await listener.execute(sql.SQL("LISTEN {}").format(channel))
                version = await store.save_run("s", "cm_1", b"secret snapshot", {"k": "secret"})
                claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=60)
                assert claimed is not None
                await store.renew_lease(claimed.lease, lease_seconds=120)  # not a change
                await store.delete_run("s", "cm_1")
                assert version == 1
                return [n.payload async for n in listener.notifies(timeout=30, stop_after=3)]

    assert asyncio.run(scenario()) == ['["s", "cm_1"]'] * 3


def test_a_version_1_schema_is_upgraded_and_keeps_its_data(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async def fill() -> None:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            await store.put("s", "k", StoredValue(json="[1]"))
            await store.append_transcript("s", [{"role": "user", "content": "hi"}])

    asyncio.run(fill())
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:  # back to version 1
        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(postgres_schema, "results")))
        conn.execute(
            sql.SQL(
                "ALTER TABLE {} DROP COLUMN title, DROP COLUMN pinned, DROP COLUMN archived"
            ).format(sql.Identifier(postgres_schema, "sessions"))
        )
        function = sql.Identifier(postgres_schema, "transcript_text")
        conn.execute(sql.SQL("DROP FUNCTION {} CASCADE").format(function))
        version_table = sql.Identifier(postgres_schema, "schema_version")
        conn.execute(sql.SQL("DELETE FROM {} WHERE version >= 2").format(version_table))

    async def upgrade() -> tuple[Any, ...]:
        async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
            versions = await store.upgrade()
            await store.put_result("r", "a", "1")
            await store.append_transcript("s", [{"role": "user", "content": "not a title"}])
            record = await store.session_record("s")
            old = (await store.get("s", "k"), await store.get_result("r", "a"))
            return versions, *old, record and (record.title, record.entries)

    # a session from before titles keeps showing its id (`""`): its later messages don't title it
    assert asyncio.run(upgrade()) == ((1, 4), StoredValue(json="[1]"), "1", ("", 2))


def _observe_waiting(
    monkeypatch: pytest.MonkeyPatch, *, schedule: Poll | None = None
) -> asyncio.Event:
    """Patch the store's waiting so the event is set once a waiter has its starting
    revision (and, with `schedule`, so it polls on that schedule instead of its own)."""
    waiting_started = asyncio.Event()

    async def observed(
        *,
        event: asyncio.Event,
        revision: Callable[[], Awaitable[int | None]],
        since: int | None,
        timeout: float,
        poll: Any,
    ) -> bool:
        async def watched() -> int | None:
            value = await revision()
            waiting_started.set()
            return value

        return await wait_for_revision(
            event=event, revision=watched, since=since, timeout=timeout, poll=schedule or poll
        )

    monkeypatch.setattr("clawcell.store._postgres._store.wait_for_revision", observed)
    return waiting_started


def _woken_by_an_update(
    dsn: str, schema: str, waiting_started: asyncio.Event, *, within: float
) -> bool:
    """Whether a waiter on one store is woken when another store updates the run."""

    async def scenario() -> bool:
        async with (
            PostgresStore(dsn, schema=schema) as waiting,
            PostgresStore(dsn, schema=schema) as working,
        ):
            version = await working.save_run("s", "cm_1", b"", {})
            waiter = asyncio.create_task(waiting.wait_for_change("s", "cm_1", timeout=3600))
            await waiting_started.wait()
            await working.update_run_meta("s", "cm_1", version=version, patch={"r": 1})
            return await asyncio.wait_for(waiter, within)

    return asyncio.run(scenario())


def test_without_listen_a_waiter_still_sees_the_change_by_polling(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(self: object) -> None:
        raise psycopg.OperationalError("LISTEN is unavailable")

    monkeypatch.setattr("clawcell.store._postgres._listener.Listener.ensure_listening", refuse)
    started = _observe_waiting(monkeypatch)
    assert _woken_by_an_update(postgres_dsn, postgres_schema, started, within=3600) is True


def test_a_waiter_is_woken_by_notify_without_polling(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _observe_waiting(
        monkeypatch, schedule=Poll(first=3600, cap=3600)
    )  # only NOTIFY wakes
    # A lost NOTIFY fails within a minute rather than hanging.
    assert _woken_by_an_update(postgres_dsn, postgres_schema, started, within=60) is True


def test_a_wait_begun_before_the_store_closed_opens_no_listen_connection(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A waiter queued for the listener while the store closes used to open a `LISTEN`
    connection nobody closed (psycopg reported it, much later, in an unrelated test)."""
    from clawcell.store._postgres._listener import Listener
    from clawcell.store._waiting import Waiters

    async def scenario() -> int:
        channel = f"c_{postgres_schema}"
        listener = Listener(postgres_dsn, channel, Waiters())
        await listener.close()
        await listener.ensure_listening()  # the queued waiter's turn comes after the close
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query = %s",
                (f'LISTEN "{channel}"',),
            ).fetchone()
        return -1 if row is None else int(row[0])

    assert asyncio.run(scenario()) == 0
