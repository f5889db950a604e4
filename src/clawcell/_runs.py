"""Parked runs: the cells that returned `waiting`, their typed record, in memory and durable.

A parked cell is its guest (kept live while the run is parked in memory, up to
`MAX_LIVE_PARKED` per runtime) or a snapshot of it, plus the host's side: pending requests,
the output ledger and buffered session-store writes. `ParkedRecord` is that host side as one
typed, versioned value; `to_state`/`from_state` are the only code that spells its keys.

With a durable session store (`SQLiteStore`), every park is committed to the store before
the `waiting` envelope is returned, and a `wait` takes the run out of the store first —
atomically, so of two processes racing for one run exactly one continues it. A process that
restarts (even after SIGKILL) can therefore continue the cell from the database.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from ._cell import Cell
from .envelope import OutputLedger
from .errors import SnapshotError
from .store import SessionStore, SessionView, StoredValue

__all__ = ["MAX_LIVE_PARKED", "MAX_SUSPENDED_RUNS", "ParkedRecord", "ParkedRuns", "Run"]

MAX_SUSPENDED_RUNS: Final = 64
MAX_LIVE_PARKED: Final = 8
"""Parked runs of one runtime that keep their guest live (the rest are snapshots)."""

RECORD_VERSION: Final = 1


@dataclass
class Run:
    """A cell between its first `exec` and its end."""

    run_id: str
    cell: Cell
    ledger: OutputLedger
    session: SessionView
    restart_safe: bool = False
    snapshot: bytes | None = None
    """The parked guest as bytes when its guest went back to the pool (`None`: live)."""
    expires_at: float = 0.0  # wall clock (`time.time()`), so it survives a restart
    resuming: bool = False

    def record(self) -> ParkedRecord:
        """The host side of this run as it is parked now."""
        return ParkedRecord(
            cell=self.cell.host_state(),
            ledger=self.ledger,
            writes=dict(self.session.writes),
            restart_safe=self.restart_safe,
            expires_at=self.expires_at,
        )


@dataclass(frozen=True, kw_only=True)
class ParkedRecord:
    """What a process needs, besides the guest snapshot, to continue a parked run.

    Attributes:
        cell: The cell's host state (`Cell.host_state`): pending requests and flags.
        ledger: The cell's output ledger.
        writes: Session-store writes buffered until the cell completes.
        restart_safe: Whether the cell runs in restart-safe mode.
        expires_at: Wall-clock expiry, in seconds since the epoch.
    """

    cell: dict[str, Any]
    ledger: OutputLedger
    writes: dict[str, StoredValue | None]
    restart_safe: bool
    expires_at: float

    def to_state(self) -> dict[str, Any]:
        """The record as JSON-shaped data, with its format version."""
        return {
            "version": RECORD_VERSION,
            "cell": self.cell,
            "ledger": self.ledger.to_state(),
            "writes": {
                key: None if value is None else [value.json, value.network_content]
                for key, value in self.writes.items()
            },
            "restartSafe": self.restart_safe,
            "expiresAt": self.expires_at,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ParkedRecord:
        """The record `to_state` wrote (records of 0.1, without `version`, read as 1).

        Raises:
            SnapshotError: the record is of another version or damaged in any way.
        """
        version = state.get("version", RECORD_VERSION)
        if version != RECORD_VERSION:
            raise SnapshotError(
                f"parked run record version {version!r} is not supported "
                f"(this build reads {RECORD_VERSION})"
            )
        try:
            return cls(
                cell=_cell_state(state["cell"]),
                ledger=OutputLedger.from_state(state["ledger"]),
                writes=_writes(state.get("writes", {})),
                restart_safe=_flag(state.get("restartSafe", False)),
                expires_at=float(state["expiresAt"]),
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise SnapshotError(f"parked run record is damaged: {exc!r}") from exc


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {value!r}")
    return value


def _cell_state(value: object) -> dict[str, Any]:
    state = cast(dict[str, Any], _mapping(value))
    for entry in _list(state.get("pending", [])):
        item = _mapping(entry)
        if not isinstance(item["id"], str) or not isinstance(item["method"], str):
            raise TypeError(f"a pending request needs a string id and method, got {item!r}")
        _list(item.get("args", []))
        reply = item.get("reply")
        if reply is not None:
            reply_map = _mapping(reply)
            _flag(reply_map["ok"])
            if not isinstance(reply_map["payload"], str):
                raise TypeError("a saved reply payload must be JSON text")
    _flag(state.get("bridgeDispatchStarted", False))
    _flag(state.get("valueReady", False))
    if not isinstance(state.get("valueJson"), str | None):
        raise TypeError("valueJson must be JSON text or null")
    return state


def _writes(value: object) -> dict[str, StoredValue | None]:
    writes: dict[str, StoredValue | None] = {}
    for key, item in _mapping(value).items():
        if item is None:
            writes[str(key)] = None
            continue
        text, network = _list(item)
        if not isinstance(text, str):
            raise TypeError(f"a buffered store write must be JSON text, got {text!r}")
        writes[str(key)] = StoredValue(json=text, network_content=_flag(network))
    return writes


def _mapping(value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object, got {type(value).__name__}")
    return cast(Mapping[str, Any], value)


def _list(value: object) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return cast(list[Any], value)


class ParkedRuns:
    """The parked runs of one `CodeMode`: capacity, expiry, and the durable copy."""

    def __init__(self, *, store: SessionStore, session_id: str, durable: bool) -> None:
        self._store = store
        self._session_id = session_id
        self.durable = durable
        self._runs: dict[str, Run] = {}

    def get(self, run_id: str) -> Run | None:
        return self._runs.get(run_id)

    def has_room_for(self, run_id: str) -> bool:
        return run_id in self._runs or len(self._runs) < MAX_SUSPENDED_RUNS

    def live_count(self) -> int:
        """Parked runs holding a live guest."""
        return sum(1 for run in self._runs.values() if run.snapshot is None and not run.resuming)

    async def park(self, run: Run, snapshot: bytes | None) -> None:
        """Keep a parked run; with a durable store, commit it (and `snapshot`) first."""
        if self.durable and snapshot is not None:
            state = run.record().to_state()
            await self._store.save_run(self._session_id, run.run_id, snapshot, state)
        self._runs[run.run_id] = run

    async def take_durable(self, run_id: str) -> tuple[bytes, ParkedRecord] | None:
        """Take a run out of the durable store (`None` if unknown or another process has it).

        Raises:
            SnapshotError: the stored record is damaged (the run is gone from the store).
        """
        if not self.durable:
            return None
        parked = await self._store.take_run(self._session_id, run_id)
        if parked is None:
            return None
        return parked.blob, ParkedRecord.from_state(parked.meta)

    def forget(self, run_id: str) -> Run | None:
        """Remove a run from memory (finished, expired or taken elsewhere)."""
        return self._runs.pop(run_id, None)

    def expired(self) -> list[Run]:
        """Remove and return the runs idle beyond their TTL."""
        now = time.time()
        gone = [
            run_id
            for run_id, run in self._runs.items()
            if run.expires_at <= now and not run.resuming
        ]
        return [self._runs.pop(run_id) for run_id in gone]

    def all(self) -> list[Run]:
        return list(self._runs.values())
