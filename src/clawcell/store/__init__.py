"""The session store of Code Mode cells and its backends (spec `code-mode.md` §10.2)."""

from __future__ import annotations

import typing

from .. import _lazy
from ..errors import StaleRunError
from ._errors import StoreRangeError, StoreTypeError, StoreUnavailableError
from ._first import FirstWriter
from ._keeper import LeaseKeeper
from ._memory import MemoryStore
from ._protocol import (
    ClaimedRun,
    Lease,
    ParkedRun,
    SessionInfo,
    SessionStore,
    StoredValue,
    SweepReport,
)
from ._seals import StateKeys, state_keys_for
from ._view import PERSISTENCE_WARNING, SessionView

if typing.TYPE_CHECKING:
    from ._opening import open_store
    from ._postgres import PostgresStore
    from ._sqlite import SQLiteStore

# The durable backends load on first use: running cells needs neither (about 10 ms of
# imports, `sqlite3` among them, off every process's start).
__getattr__ = _lazy.lazy_exports(
    __name__,
    {"_sqlite": ["SQLiteStore"], "_postgres": ["PostgresStore"], "_opening": ["open_store"]},
)


__all__ = [
    "PERSISTENCE_WARNING",
    "ClaimedRun",
    "FirstWriter",
    "Lease",
    "LeaseKeeper",
    "MemoryStore",
    "ParkedRun",
    "PostgresStore",
    "SQLiteStore",
    "SessionInfo",
    "SessionStore",
    "SessionView",
    "StaleRunError",
    "StateKeys",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "StoredValue",
    "SweepReport",
    "open_store",
    "state_keys_for",
]
