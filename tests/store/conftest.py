"""Store fixtures: `new_store` makes fresh stores of each backend the suite covers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from clawcell.store import MemoryStore, SQLiteStore

AnyStore = MemoryStore | SQLiteStore
StoreFactory = Callable[[], AnyStore]


@pytest.fixture(params=["memory", "sqlite"])
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """A factory of stores of one backend; the durable ones it makes share one database."""
    if request.param == "memory":
        return MemoryStore
    return lambda: SQLiteStore(tmp_path / "nested" / "state.db")


@pytest.fixture(params=["sqlite"])
def new_durable_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Like `new_store`, for the backends whose data outlives the store object."""
    return lambda: SQLiteStore(tmp_path / "nested" / "state.db")
