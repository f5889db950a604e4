"""Parked runs: the cells that returned `waiting`, their typed record, in memory and durable.

A parked cell is its guest (kept live while the run is parked in memory, up to
`MAX_LIVE_PARKED` in the whole process) or a snapshot of it, plus the host's side: pending requests,
the output ledger and buffered session-store writes. `ParkedRecord` is that host side as one
typed, versioned value; `to_state`/`from_state` are the only code that spells its keys.

With a durable session store (`SQLiteStore`, `PostgresStore`), every park is committed to
the store before the `waiting` envelope is returned, and a `wait` claims the run with a lease
first (`_durable.py`), so of two workers racing for one run exactly one continues it. A process
that restarts (even after SIGKILL) can therefore continue the cell from the database.
"""

from __future__ import annotations

import functools
import math
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from .._cell import Cell
from .._lazy import record_class, value_class
from ..approvals import PendingApproval
from ..envelope import OutputLedger
from ..errors import SnapshotError
from ..store import (
    SessionStore,
    SessionView,
    StateKeys,
    StoredValue,
    configured_state_keys,
    state_keys_for,
)

if TYPE_CHECKING:
    from ..store import LeaseKeeper

__all__ = [
    "MAX_LIVE_PARKED",
    "MAX_SUSPENDED_RUNS",
    "UNAVAILABLE_MESSAGE",
    "ParkedRecord",
    "ParkedRuns",
    "Run",
    "RunHome",
    "live_parked_in_process",
]

MAX_SUSPENDED_RUNS: Final = 64
MAX_LIVE_PARKED: Final = 8
"""Parked runs of the whole process that keep their guest live (the rest are snapshots).

A live guest keeps its memory (about 2.6 MiB), so the bound is the process's: per runtime,
1,000 idle parked cells over 16 runtimes held 336 MiB of live guests."""

RECORD_VERSION: Final = 1
UNAVAILABLE_MESSAGE: Final = "code mode run is unavailable or expired."


@value_class
class RunHome:
    """Where a session's runs live: the store, the session's id, and whether the store is
    durable (parked runs and decisions then outlive the process)."""

    store: SessionStore
    session_id: str
    durable: bool

    @functools.cached_property
    def keys(self) -> StateKeys:
        """The state keys that seal this home's runs, decisions and saved results.

        Raises:
            ConfigurationError: a bad key, or no key for a durable store in production.
        """
        return state_keys_for(self.store, durable=self.durable)

    def check_keys(self) -> None:
        """Fail now on a bad or missing key configuration; the development key file is only
        created when a record is first sealed or read.

        Raises:
            ConfigurationError: a bad key, or no key for a durable store in production.
        """
        configured_state_keys(self.store, durable=self.durable)


@record_class
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
    in_leg: bool = False
    """A leg (`exec` or `wait`) owns the run, from its claim to the end of its settle step:
    neither `close` nor expiry touches it then; the leg hands its guest back itself."""
    holds_guest: bool = True
    """The run holds a guest it acquired and has not released: each acquisition is released
    once, whichever exits race for it (a second release could hand back a guest the pool
    has lent to another cell since)."""
    version: int | None = None
    """The fencing version of the run's durable copy as this worker last parked it."""
    keeper: LeaseKeeper | None = None
    """The lease of the `wait` leg running now (durable stores)."""

    def record(self) -> ParkedRecord:
        """The host side of this run as it is parked now."""
        approvals = self.cell.approvals
        return ParkedRecord(
            cell=self.cell.host_state(),
            ledger=self.ledger,
            writes=dict(self.session.writes),
            restart_safe=self.restart_safe,
            expires_at=self.expires_at,
            approvals=() if approvals is None else tuple(approvals.pending),
        )


@value_class
class ParkedRecord:
    """What a process needs, besides the guest snapshot, to continue a parked run.

    Attributes:
        cell: The cell's host state (`Cell.host_state`): pending requests and flags.
        ledger: The cell's output ledger.
        writes: Session-store writes buffered until the cell completes.
        restart_safe: Whether the cell runs in restart-safe mode.
        expires_at: Wall-clock expiry, in seconds since the epoch.
        approvals: Calls waiting for a person's decision (they have not run).
    """

    cell: dict[str, Any]
    ledger: OutputLedger
    writes: dict[str, StoredValue | None]
    restart_safe: bool
    expires_at: float
    approvals: tuple[PendingApproval, ...] = ()

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
            "approvals": [_approval_state(a) for a in self.approvals],
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
                cell=_cell_state(_with_settled(state["cell"], state.get("settled", {}))),
                ledger=OutputLedger.from_state(state["ledger"]),
                writes=_writes(state.get("writes", {})),
                restart_safe=_flag(state.get("restartSafe", False)),
                expires_at=float(state["expiresAt"]),
                approvals=tuple(_approval(a) for a in _list(state.get("approvals", []))),
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise SnapshotError(f"parked run record is damaged: {exc!r}") from exc


def _approval_state(approval: PendingApproval) -> dict[str, Any]:
    return {
        "id": approval.id,
        "requestId": approval.request_id,
        "tool": approval.tool,
        "input": approval.input,
        "reason": approval.reason,
        "requestedAt": approval.requested_at,
    }


def _approval(value: object) -> PendingApproval:
    item = _mapping(value)
    texts = [item[key] for key in ("id", "requestId", "tool", "reason")]
    if not all(isinstance(text, str) for text in texts):
        raise TypeError(f"a pending approval needs string fields, got {item!r}")
    approval_id, request_id, tool, reason = cast(list[str], texts)
    return PendingApproval(
        id=approval_id,
        run_id="",  # filled in by the run that revives it
        request_id=request_id,
        tool=tool,
        input=item.get("input"),
        reason=reason,
        requested_at=float(item["requestedAt"]),
    )


def _with_settled(cell: object, settled: object) -> dict[str, Any]:
    """The cell state with the replies written back after its park (`meta.settled`)."""
    state = dict(_mapping(cell))
    replies = _mapping(settled)
    pending: list[Any] = []
    for entry in _list(state.get("pending", [])):
        item = dict(_mapping(entry))
        reply = replies.get(item.get("id", ""))
        if reply is not None and item.get("reply") is None:
            item["reply"] = reply
        pending.append(item)
    state["pending"] = pending
    return state


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


_EVERY: Final[dict[weakref.ref[ParkedRuns], None]] = {}
"""Every runtime's parked runs, by weak reference: a plain dict, not a `WeakSet`, whose
iteration guard cost more than the count itself on every park."""


def _gone(reference: weakref.ref[ParkedRuns]) -> None:
    _EVERY.pop(reference, None)  # one dict operation: safe from the collector, on any thread


class ParkedRuns:
    """The parked runs of one `CodeMode`: capacity, expiry, and the durable copy."""

    def __init__(self, *, store: SessionStore, session_id: str, durable: bool) -> None:
        self._store = store
        self._session_id = session_id
        self.durable = durable
        self._runs: dict[str, Run] = {}
        self._soonest = math.inf
        """No kept run expires before this time (`expired` looks at none until then)."""
        _EVERY[weakref.ref[ParkedRuns](self, _gone)] = None

    def get(self, run_id: str) -> Run | None:
        return self._runs.get(run_id)

    def has_room_for(self, run_id: str) -> bool:
        return run_id in self._runs or len(self._runs) < MAX_SUSPENDED_RUNS

    def live_count(self) -> int:
        """Parked runs holding a live guest."""
        runs = list(self._runs.values())  # one C-level copy: other threads may park meanwhile
        return sum(1 for run in runs if run.snapshot is None and not run.resuming)

    def keep(self, run: Run) -> None:
        """Keep a parked run in memory (its durable copy, if any, is already committed)."""
        self._runs[run.run_id] = run
        self._soonest = min(self._soonest, run.expires_at)

    def forget(self, run_id: str) -> Run | None:
        """Remove a run from memory (finished, expired or taken elsewhere)."""
        return self._runs.pop(run_id, None)

    def expired(self) -> list[Run]:
        """Remove and return the runs idle beyond their TTL."""
        now = time.time()
        if now < self._soonest:  # every `wait` asks: most find nothing due
            return []
        runs = self._runs
        gone = [run_id for run_id, run in runs.items() if run.expires_at <= now and not run.in_leg]
        expired = [runs.pop(run_id) for run_id in gone]
        self._soonest = min((run.expires_at for run in runs.values()), default=math.inf)
        return expired

    def all(self) -> list[Run]:
        return list(self._runs.values())


def live_parked_in_process() -> int:
    """Parked runs holding a live guest, over every runtime of this process."""
    total = 0
    for reference in list(_EVERY):  # a copy: runtimes may come and go meanwhile
        parked = reference()
        if parked is not None:
            total += parked.live_count()
    return total
