"""The session store of Code Mode cells and its backends (spec `code-mode.md` §10.2)."""

from __future__ import annotations

from ..errors import StaleRunError
from ._errors import StoreRangeError, StoreTypeError, StoreUnavailableError
from ._keeper import LeaseKeeper
from ._memory import MemoryStore
from ._opening import open_store
from ._postgres import PostgresStore
from ._protocol import (
    ClaimedRun,
    Lease,
    ParkedRun,
    SessionInfo,
    SessionStore,
    StoredValue,
    SweepReport,
)
from ._sqlite import SQLiteStore
from ._view import PERSISTENCE_WARNING, SessionView

__all__ = [
    "PERSISTENCE_WARNING",
    "ClaimedRun",
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
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "StoredValue",
    "SweepReport",
    "open_store",
]
