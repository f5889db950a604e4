"""Parked runs: the cells that returned `waiting`, in memory and (optionally) durable.

A parked cell is a guest snapshot plus the host's side of it (pending requests, the output
ledger, buffered session-store writes). Its guest goes back to the pool, so 64 parked cells
cost 64 snapshots (tens of kilobytes each when idle), not 64 wasm instances.

With a durable session store (`SQLiteStore`), every park is committed to the store before
the `waiting` envelope is returned, and a `wait` takes the run out of the store first —
atomically, so of two processes racing for one run exactly one continues it. A process that
restarts (even after SIGKILL) can therefore continue the cell from the database.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Final

from ._cell import Cell
from ._output import OutputLedger
from .store import SessionStore, SessionView, StoredValue

__all__ = ["MAX_SUSPENDED_RUNS", "ParkedRuns", "Run"]

MAX_SUSPENDED_RUNS: Final = 64


@dataclass
class Run:
    """A cell between its first `exec` and its end."""

    run_id: str
    cell: Cell
    ledger: OutputLedger
    session: SessionView
    restart_safe: bool = False
    snapshot: bytes | None = None
    expires_at: float = 0.0  # wall clock (`time.time()`), so it survives a restart
    resuming: bool = False
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    def durable_meta(self) -> dict[str, Any]:
        """What a process needs, besides the snapshot, to continue this run."""
        writes = {
            key: None if value is None else [value.json, value.network_content]
            for key, value in self.session.writes.items()
        }
        return {
            "cell": self.cell.host_state(),
            "ledger": self.ledger.to_state(),
            "writes": writes,
            "restartSafe": self.restart_safe,
            "expiresAt": self.expires_at,
        }


def stored_writes(meta: dict[str, Any]) -> dict[str, StoredValue | None]:
    """The buffered session-store writes saved by `Run.durable_meta`."""
    writes: dict[str, StoredValue | None] = {}
    for key, value in dict(meta.get("writes", {})).items():
        writes[str(key)] = (
            None
            if value is None
            else StoredValue(json=str(value[0]), network_content=bool(value[1]))
        )
    return writes


class ParkedRuns:
    """The parked runs of one `CodeMode`, with capacity, expiry and durability."""

    def __init__(self, *, store: SessionStore, session_id: str, durable: bool) -> None:
        self._store = store
        self._session_id = session_id
        self.durable = durable
        self._runs: dict[str, Run] = {}

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, run_id: str) -> Run | None:
        return self._runs.get(run_id)

    def has_room_for(self, run_id: str) -> bool:
        return run_id in self._runs or len(self._runs) < MAX_SUSPENDED_RUNS

    async def park(self, run: Run) -> None:
        """Keep a parked run; with a durable store, commit it before returning."""
        self._runs[run.run_id] = run
        if self.durable and run.snapshot is not None:
            meta = run.durable_meta()
            await self._store.save_run(self._session_id, run.run_id, run.snapshot, meta)

    async def take_durable(self, run_id: str) -> tuple[bytes, dict[str, Any]] | None:
        """Take a run out of the durable store (`None` if another process has it)."""
        if not self.durable:
            return None
        parked = await self._store.take_run(self._session_id, run_id)
        return None if parked is None else (parked.blob, dict(parked.meta))

    def forget(self, run_id: str) -> Run | None:
        """Remove a run from memory (finished, expired or taken elsewhere)."""
        return self._runs.pop(run_id, None)

    def expired(self) -> list[Run]:
        """Remove and return the runs idle beyond their TTL."""
        now = time.time()
        gone = [run_id for run_id, run in self._runs.items() if run.expires_at <= now]
        return [self._runs.pop(run_id) for run_id in gone]

    async def discard_durable(self, run_id: str) -> None:
        if self.durable:
            await self._store.delete_run(self._session_id, run_id)

    def all(self) -> list[Run]:
        return list(self._runs.values())
