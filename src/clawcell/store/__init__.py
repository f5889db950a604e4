"""The session store of Code Mode cells and its backends (spec `code-mode.md` §10.2).

`SessionStore` is the sum of five role protocols (`EntryStore`, `RunStore`, `ResultStore`,
`TranscriptStore`, `DocumentStore`); ask for the role you read. Every backend also offers
`TranscriptSearch` (full-text indexes in the durable ones, a bounded scan in memory) and
`SessionDirectory` (the session list); `transcript_text` reads an entry's text for all of them.
"""

from __future__ import annotations

import typing

from .. import _lazy
from ..errors import StaleRunError
from ._cancellation import cancel_requested
from ._directory import SessionDirectory, SessionPage, SessionRecord
from ._errors import StoreRangeError, StoreTypeError, StoreUnavailableError
from ._first import FirstWriter
from ._memory._store import MemoryStore
from ._protocol import (
    ClaimedRun,
    DocumentStore,
    EntryStore,
    Lease,
    ParkedRun,
    ResultStore,
    RunStore,
    SessionInfo,
    SessionStore,
    StoredValue,
    SweepReport,
    TranscriptStore,
)
from ._seals import StateKeys, configured_state_keys, state_keys_for
from ._transcript_text import transcript_text
from ._view import SessionView

if typing.TYPE_CHECKING:
    from ._jobs._job_store import JobRecord, JobRun, JobStore
    from ._jobs._memory_jobs import MemoryJobStore
    from ._jobs._opening import job_store_for
    from ._jobs._postgres_jobs import PostgresJobStore
    from ._jobs._sqlite_jobs import SQLiteJobStore
    from ._keeper import LeaseKeeper
    from ._opening import open_store
    from ._postgres._store import PostgresStore
    from ._search import TranscriptHit, TranscriptHits, TranscriptSearch
    from ._sqlite._store import SQLiteStore
    from ._turns import SessionTurns, TurnHold

# The durable backends and the job stores load on first use: running cells needs none of
# them (about 10 ms of imports, `sqlite3` among them, off every process's start). Nor does
# it need a durable run's lease keeper, an agent's turn rows or transcript search (stop 49).
__getattr__ = _lazy.lazy_exports(
    __name__,
    {
        "_sqlite._store": ["SQLiteStore"],
        "_postgres._store": ["PostgresStore"],
        "_opening": ["open_store"],
        "_jobs._job_store": ["JobRecord", "JobRun", "JobStore"],
        "_jobs._memory_jobs": ["MemoryJobStore"],
        "_jobs._opening": ["job_store_for"],
        "_jobs._sqlite_jobs": ["SQLiteJobStore"],
        "_jobs._postgres_jobs": ["PostgresJobStore"],
        "_keeper": ["LeaseKeeper"],
        "_search": ["TranscriptHit", "TranscriptHits", "TranscriptSearch"],
        "_turns": ["SessionTurns", "TurnHold"],
    },
)


__all__ = [
    "ClaimedRun",
    "DocumentStore",
    "EntryStore",
    "FirstWriter",
    "JobRecord",
    "JobRun",
    "JobStore",
    "Lease",
    "LeaseKeeper",
    "MemoryJobStore",
    "MemoryStore",
    "ParkedRun",
    "PostgresJobStore",
    "PostgresStore",
    "ResultStore",
    "RunStore",
    "SQLiteJobStore",
    "SQLiteStore",
    "SessionDirectory",
    "SessionInfo",
    "SessionPage",
    "SessionRecord",
    "SessionStore",
    "SessionTurns",
    "SessionView",
    "StaleRunError",
    "StateKeys",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "StoredValue",
    "SweepReport",
    "TranscriptHit",
    "TranscriptHits",
    "TranscriptSearch",
    "TranscriptStore",
    "TurnHold",
    "cancel_requested",
    "configured_state_keys",
    "job_store_for",
    "open_store",
    "state_keys_for",
    "transcript_text",
]
