"""The session store of Code Mode cells and its backends (spec `code-mode.md` §10.2)."""

from __future__ import annotations

import typing

from .. import _lazy
from ..errors import StaleRunError
from ._errors import StoreRangeError, StoreTypeError, StoreUnavailableError
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
from ._search import TranscriptHit, TranscriptHits, TranscriptSearch
from ._view import SessionView

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
    "TranscriptHit",
    "TranscriptHits",
    "TranscriptSearch",
    "open_store",
]
