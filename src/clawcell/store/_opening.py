"""`open_store`: one string names a durable store, a file path or a PostgreSQL URL."""

from __future__ import annotations

import os

from ._postgres._store import PostgresStore
from ._sqlite._store import SQLiteStore

__all__ = ["POSTGRES_SCHEMES", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(
    target: str | os.PathLike[str], *, schema: str = "clawcell", max_size: int | None = None
) -> SQLiteStore | PostgresStore:
    """The durable store `target` names, for `--store` options and configuration files.

    Args:
        target: A `postgresql://` (or `postgres://`) URL for a `PostgresStore`; anything else
            is the path of an `SQLiteStore` file.
        schema: The PostgreSQL schema, for a URL.
        max_size: The PostgreSQL pool's most connections (the store's default when `None`);
            unused for SQLite.

    Nothing is opened until the store's first call.
    """
    text = os.fspath(target)
    if text.startswith(POSTGRES_SCHEMES):
        if max_size is None:
            return PostgresStore(text, schema=schema)
        return PostgresStore(text, schema=schema, max_size=max_size)
    return SQLiteStore(text)
