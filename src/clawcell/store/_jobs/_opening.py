"""`job_store_for(store)`: the job store that lives beside a session store."""

from __future__ import annotations

import weakref
from typing import Any

from ...errors import ConfigurationError
from .._memory._store import MemoryStore
from ._job_store import JobStore
from ._memory_jobs import MemoryJobStore

__all__ = ["job_store_for"]

_MEMORY: weakref.WeakKeyDictionary[MemoryStore, MemoryJobStore] = weakref.WeakKeyDictionary()


def job_store_for(store: Any) -> JobStore:
    """The jobs of `store`: a `JobStore` as is, or one in the same place as a session store.

    A `MemoryStore` gets one `MemoryJobStore` for its lifetime, an `SQLiteStore` a
    `SQLiteJobStore` on its file, a `PostgresStore` a `PostgresJobStore` on its database and
    schema (a pool of its own).

    Raises:
        ConfigurationError: `store` is none of these.
    """
    if isinstance(store, JobStore):
        return store
    if isinstance(store, MemoryStore):
        return _MEMORY.setdefault(store, MemoryJobStore())
    kind = type(store).__name__
    if kind == "SQLiteStore":
        from ._sqlite_jobs import SQLiteJobStore

        return SQLiteJobStore(store.path)
    if kind == "PostgresStore":
        from ._postgres_jobs import PostgresJobStore

        return PostgresJobStore(store._dsn, schema=store.schema)
    raise ConfigurationError(
        f"Automations keep their jobs in a session store or a `JobStore`, got {store!r}; pass "
        "a `MemoryStore`, `SQLiteStore`, `PostgresStore` or a `JobStore`."
    )
