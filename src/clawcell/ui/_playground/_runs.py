"""The playground's run history: each session's recent `exec`/`wait` calls, newest first.

The history lives in the agent's session store (bounded per session), so a reload on any
worker sharing that store shows the same runs with their envelopes, and card ids never
collide between workers; a run parked on approvals shows a live card for
each approval still pending and, for the others, who decided (or that it expired) and when,
read from the session's approval audit trail.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import field
from typing import Any, Final

from ..._lazy import value_class
from ...store import EntryStore, FirstWriter, MemoryStore, StoredValue
from .._protocol import ApprovingRunner, CellRunner

__all__ = ["PlayHistory", "PlayRun", "RunView", "waiting_approvals"]

MAX_RUNS: Final = 50
"""Runs each session's history keeps (older ones drop off)."""
_SUFFIX: Final = "\x1fplay"  # the derived session whose entries are a session's runs


@value_class
class PlayRun:
    """One playground call: its card id, what ran, and its envelope once it ended."""

    id: str
    tool: str
    code: str | None
    run_id: str | None
    """For `wait`: the run it continues."""
    started_at: float = field(default_factory=time.time)
    """When it started, in seconds since the epoch."""
    envelope: Mapping[str, Any] | None = None
    seconds: float | None = None


@value_class
class RunView:
    """A run as the history draws it: the run, and each approval it asked for with its
    decision (`None` while pending)."""

    run: PlayRun
    approvals: tuple[tuple[Mapping[str, Any], Mapping[str, Any] | None], ...] = ()


def waiting_approvals(envelope: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The `pendingApprovals` of an envelope parked on approvals (else none)."""
    if envelope is None or envelope.get("status") != "waiting":
        return []
    if envelope.get("reason") != "approval" or not isinstance(envelope.get("runId"), str):
        return []
    prompts: object = envelope.get("pendingApprovals")
    if not isinstance(prompts, list):
        return []
    return [p for p in prompts if isinstance(p, Mapping)]  # pyright: ignore[reportUnknownVariableType]


class PlayHistory:
    """Recent playground runs of every session, kept in a session store.

    Each run is an entry of the derived session `<session>\\x1fplay`, keyed by its number in
    the session (`n`, zero-padded); its card id is `play-<n>`. The number is taken with the
    store's `put_new`, so two workers starting runs at once never share a card id, and every
    worker reads the same history. Only the newest `max_runs` of a session are kept.
    """

    def __init__(self, store: EntryStore | None = None, *, max_runs: int = MAX_RUNS) -> None:
        self._store: EntryStore = store if store is not None else MemoryStore()
        self._max_runs = max_runs
        self._lock = asyncio.Lock()  # `put_new` within this process for a store without it

    async def _stored(self, session_id: str) -> list[tuple[int, PlayRun]]:
        """The session's runs with their numbers, oldest first."""
        items = await self._store.items(session_id + _SUFFIX)
        runs = [(int(key), _run_of(value.json)) for key, value in items.items() if key.isdigit()]
        return sorted(runs, key=lambda pair: pair[0])

    async def start(
        self, session_id: str, *, tool: str, code: str | None, run_id: str | None
    ) -> PlayRun:
        """Record a run that starts now under the session's next free number; the run."""
        stored = await self._stored(session_id)
        n = stored[-1][0] + 1 if stored else 1
        while True:
            run = PlayRun(id=f"play-{n}", tool=tool, code=code, run_id=run_id)
            if await self._put(session_id, n, run, new=True):
                break
            n += 1  # another worker took `n` meanwhile
        for old, _ in stored[: max(0, len(stored) + 1 - self._max_runs)]:
            await self._store.delete(session_id + _SUFFIX, _key(old))
        return run

    async def finished(
        self, session_id: str, card: str, envelope: Mapping[str, Any]
    ) -> PlayRun | None:
        """Record a run's envelope; the updated run (`None` if it dropped off meanwhile)."""
        n = _number(card)
        stored = None if n is None else await self._store.get(session_id + _SUFFIX, _key(n))
        if n is None or stored is None:
            return None
        run = _run_of(stored.json)
        seconds = max(0.0, time.time() - run.started_at)
        run = dataclasses.replace(run, envelope=envelope, seconds=seconds)
        await self._put(session_id, n, run, new=False)
        return run

    async def _put(self, session_id: str, n: int, run: PlayRun, *, new: bool) -> bool:
        value = StoredValue(json=json.dumps(_json_of(run), separators=(",", ":")))
        if not new:
            await self._store.put(session_id + _SUFFIX, _key(n), value)
            return True
        if isinstance(self._store, FirstWriter):
            return await self._store.put_new(session_id + _SUFFIX, _key(n), value)
        async with self._lock:  # a store without `put_new`: unique within this process only
            if await self._store.get(session_id + _SUFFIX, _key(n)) is not None:
                return False
            await self._store.put(session_id + _SUFFIX, _key(n), value)
            return True

    async def parked_run_ids(self, session_id: str) -> list[str]:
        """The runs of the session's history that parked on approvals."""
        return [
            str(r.envelope.get("runId"))
            for _, r in await self._stored(session_id)
            if r.envelope is not None and waiting_approvals(r.envelope)
        ]

    async def view_of(self, session_id: str, run_id: str, runner: CellRunner) -> RunView | None:
        """The newest run of the session that parked `run_id` on approvals, as drawn now."""
        for _, run in reversed(await self._stored(session_id)):
            envelope = run.envelope
            if (
                envelope is not None
                and envelope.get("runId") == run_id
                and waiting_approvals(envelope)
            ):
                return RunView(run=run, approvals=_decided(run, await _audit(runner)))
        return None

    async def views(self, session_id: str, runner: CellRunner) -> list[RunView]:
        """The session's runs, newest first, with each approval's decision when decided."""
        runs = [run for _, run in reversed(await self._stored(session_id))]
        if not any(waiting_approvals(r.envelope) for r in runs):
            return [RunView(run=r) for r in runs]
        audit = await _audit(runner)
        return [RunView(run=r, approvals=_decided(r, audit)) for r in runs]


def _key(n: int) -> str:
    return f"{n:012d}"


def _number(card: str) -> int | None:
    digits = card.removeprefix("play-")
    return int(digits) if digits.isdigit() and card.startswith("play-") else None


def _json_of(run: PlayRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "tool": run.tool,
        "code": run.code,
        "runId": run.run_id,
        "startedAt": run.started_at,
        "envelope": run.envelope,
        "seconds": run.seconds,
    }


def _run_of(text: str) -> PlayRun:
    data = json.loads(text)
    return PlayRun(
        id=data["id"],
        tool=data["tool"],
        code=data["code"],
        run_id=data["runId"],
        started_at=data["startedAt"],
        envelope=data["envelope"],
        seconds=data["seconds"],
    )


async def _audit(runner: CellRunner) -> dict[str, Mapping[str, Any]]:
    """Each decision of the session (expiries included) by approval id."""
    if not isinstance(runner, ApprovingRunner):
        return {}
    return {d.approval_id: d.to_json() for d in await runner.approval_audit()}


def _decided(
    run: PlayRun, audit: Mapping[str, Mapping[str, Any]]
) -> tuple[tuple[Mapping[str, Any], Mapping[str, Any] | None], ...]:
    return tuple((p, audit.get(str(p.get("id")))) for p in waiting_approvals(run.envelope))
