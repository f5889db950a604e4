"""Store fixtures, each parametrised over `BACKENDS`, the one list of backends the suite covers:
`new_store` makes fresh stores of each backend, `new_durable_store` of each durable one, and
`shared_database` names a database several processes share.

PostgreSQL comes from `CLAWCELL_TEST_POSTGRES_DSN`, which `make test` sets by running pytest
under `scripts/pg-test-env`. Without it, the fixture starts its own throwaway server through
the same script, except under CI (`CI=true`), where a missing DSN fails loudly: the
PostgreSQL tests must never silently not run there. Each test gets its own PostgreSQL schema,
dropped afterwards.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Final, Literal

import psycopg
import pytest
from psycopg import sql

from clawcell.store import MemoryStore, PostgresStore, SQLiteStore

AnyStore = MemoryStore | SQLiteStore | PostgresStore
StoreFactory = Callable[[], AnyStore]
Backend = Literal["memory", "sqlite", "postgres"]

BACKENDS: Final[dict[Backend, type[AnyStore]]] = {
    "memory": MemoryStore,
    "sqlite": SQLiteStore,
    "postgres": PostgresStore,
}
"""Every `SessionStore` backend, by the id its tests carry; every store fixture reads this."""
DURABLE: Final = [name for name, store in BACKENDS.items() if store is not MemoryStore]
"""The backends whose data outlives the store object (and can be shared by processes)."""

DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
PG_TEST_ENV = Path(__file__).resolve().parents[2] / "scripts" / "pg-test-env"


@pytest.fixture(scope="session")
def postgres_dsn() -> Generator[str]:
    """The DSN of a PostgreSQL the tests may create schemas in."""
    dsn = os.environ.get(DSN_VARIABLE)
    if dsn:
        yield dsn
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{DSN_VARIABLE} is not set under CI; run the tests with `make test`.")
    with subprocess.Popen(
        [PG_TEST_ENV, "sh", "-c", f'echo "${DSN_VARIABLE}"; exec cat >/dev/null'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        started = server.stdout.readline().strip()
        try:
            if not started:
                pytest.fail(f"{PG_TEST_ENV} could not start PostgreSQL (see its output above).")
            yield started
        finally:
            server.stdin.close()  # the script stops the server and removes its directory
            server.wait()


@pytest.fixture
def postgres_schema(postgres_dsn: str) -> Generator[str]:
    """A fresh schema name, dropped (with everything in it) after the test."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    yield schema
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _factory(kind: Backend, tmp_path: Path, request: pytest.FixtureRequest) -> StoreFactory:
    if kind == "memory":
        return MemoryStore
    if kind == "sqlite":
        return lambda: SQLiteStore(tmp_path / "nested" / "state.db")
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema: str = request.getfixturevalue("postgres_schema")
    return lambda: PostgresStore(dsn, schema=schema, max_size=4)


@pytest.fixture(params=list(BACKENDS))
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """A factory of stores of one backend; the durable ones it makes share one database."""
    return _factory(request.param, tmp_path, request)


@pytest.fixture(params=DURABLE)
def new_durable_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Like `new_store`, for the backends whose data outlives the store object."""
    return _factory(request.param, tmp_path, request)


@pytest.fixture(params=DURABLE)
def shared_database(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The store target (a SQLite path or a PostgreSQL DSN) and schema processes share."""
    if request.param == "sqlite":
        return str(tmp_path / "shared.db"), "clawcell"
    return request.getfixturevalue("postgres_dsn"), request.getfixturevalue("postgres_schema")
