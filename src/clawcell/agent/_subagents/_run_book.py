"""`RunBook`: sub-agent run records in the parent's store, so runs outlive their process.

A run's record is an entry of a derived session of its parent, `<parent>\\x1fsubagents`, keyed
by run id (session ids may not hold control characters, so no cell's `store`/`load` and no
other session can reach it). It is written when the run starts, every third of the lease while
it runs (`aliveAt`), and when it ends. A record that says `running` but whose process is gone —
closed cleanly with a durable store (`interrupted`), or silent for a lease (a crash) — is an
orphan, resumed by the first process that finds it. Which process resumes is settled by
`put_new` on a claim entry (`<runId>#resume<n>`), so of two workers that find one orphan at
once exactly one resumes it.

Finding orphans without their parent: every run in flight is also listed in the store-wide
index `\\x1fclawcell\\x1fsubagents` (key: run id, value: its parent), written with each
save of a running record and deleted by the save that ends it. Every process's registry
sweeps the index (`indexed`) on its heartbeat, so a dead worker's runs are picked up by any
live one; an entry whose run has ended or is gone is deleted by the sweep that finds it
(`unindex`).

Retention: `prune` keeps the newest `keep` finished runs of a parent (by start) and every run
still `running` (an interrupted one included); older finished records go with their claim
entries, in one `apply`. The registry prunes each time one of a parent's runs ends, so a
parent's records stay at `keep` plus its runs in flight. Child transcripts are sessions of
their own and are left alone.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final, cast

from ...errors import ClawcellError
from ...store import EntryStore, FirstWriter, StoredValue
from ._run import SubagentRun

__all__ = ["INDEX", "KEEP_FINISHED_RUNS", "RunBook", "subagent_runs"]

INDEX: Final = "\x1fclawcell\x1fsubagents"
"""The runs in flight of every parent session (key: run id, value: `{"parent": …}`). It starts
with the separator, so no session's derived `<session>\\x1f<suffix>` is it, nor begins it (a
session id is never empty)."""

KEEP_FINISHED_RUNS: Final = 100
"""Finished run records kept per parent session by default (running ones are all kept)."""

_SUFFIX: Final = "\x1fsubagents"
_CLAIM: Final = "#resume"
_log = logging.getLogger("clawcell.agent")


class RunBook:
    """Reads and writes the run records of every parent session in one store."""

    def __init__(self, store: EntryStore) -> None:
        self._store = store

    async def save(self, run: SubagentRun) -> bool:
        """Write `run`'s record, then list it in the index while it runs and take it out once
        it ended; whether the record was written. A store outage is logged (the run goes on
        in memory; the next save of a running record lists it again, and the registry saves
        a final record again until it is written)."""
        text = json.dumps(run.record(), ensure_ascii=False, separators=(",", ":"))
        try:
            await self._store.put(run.parent + _SUFFIX, run.run_id, StoredValue(json=text))
            if run.status == "running":
                listed = json.dumps({"parent": run.parent}, ensure_ascii=False)
                await self._store.put(INDEX, run.run_id, StoredValue(json=listed))
            else:
                await self._store.delete(INDEX, run.run_id)
        except ClawcellError:
            _log.warning("saving sub-agent run %r failed", run.run_id, exc_info=True)
            return False
        return True

    async def indexed(self) -> dict[str, list[str]]:
        """The runs the index lists as in flight, by parent session (`{}` on a store outage,
        logged; unreadable entries are skipped)."""
        try:
            items = await self._store.items(INDEX)
        except ClawcellError:
            _log.warning("reading the index of sub-agent runs failed", exc_info=True)
            return {}
        parents: dict[str, list[str]] = {}
        for run_id, value in items.items():
            try:
                parent = json.loads(value.json)["parent"]
            except (ValueError, TypeError, KeyError):
                parent = None
            if isinstance(parent, str):
                parents.setdefault(parent, []).append(run_id)
        return parents

    async def unindex(self, run_id: str) -> None:
        """Take a run that ended (or whose record is gone) out of the index."""
        try:
            await self._store.delete(INDEX, run_id)
        except ClawcellError:
            _log.warning("unlisting sub-agent run %r failed", run_id, exc_info=True)

    async def load(self, parent: str) -> list[SubagentRun]:
        """The runs `parent` started, oldest first; unreadable records are logged and skipped."""
        try:
            items = await self._store.items(parent + _SUFFIX)
        except ClawcellError:
            _log.warning("reading the sub-agent runs of %r failed", parent, exc_info=True)
            return []
        runs: list[SubagentRun] = []
        for key, value in items.items():
            if _CLAIM in key:
                continue
            run = _decoded(parent, key, value.json)
            if run is not None:
                runs.append(run)
        return sorted(runs, key=lambda r: (r.started_at, r.run_id))

    async def prune(self, parent: str, keep: int) -> int:
        """Drop `parent`'s finished runs but the newest `keep` (and their claim entries);
        how many runs were dropped. Running and unreadable records stay; a store outage is
        logged (the records stay until the next prune)."""
        try:
            items = await self._store.items(parent + _SUFFIX)
            runs = [_decoded(parent, k, v.json) for k, v in items.items() if _CLAIM not in k]
            finished = sorted(
                (r for r in runs if r is not None and r.status != "running"),
                key=lambda r: (r.started_at, r.run_id),
            )
            dropped = {r.run_id for r in finished[: max(0, len(finished) - keep)]}
            if dropped:
                writes = {k: None for k in items if k.split(_CLAIM, 1)[0] in dropped}
                await self._store.apply(parent + _SUFFIX, writes)
        except ClawcellError:
            _log.warning("pruning the sub-agent runs of %r failed", parent, exc_info=True)
            return 0
        return len(dropped)

    async def claim(self, run: SubagentRun, owner: str) -> bool:
        """Whether this process may resume the orphan `run` (exactly one claimant wins)."""
        key = f"{run.run_id}{_CLAIM}{run.resumes + 1}"
        value = StoredValue(json=json.dumps(owner))
        store = self._store
        try:
            if isinstance(store, FirstWriter):
                return await store.put_new(run.parent + _SUFFIX, key, value)
            await store.put(run.parent + _SUFFIX, key, value)
        except ClawcellError:
            _log.warning("claiming sub-agent run %r failed", run.run_id, exc_info=True)
            return False
        return True


async def subagent_runs(store: EntryStore, session_id: str) -> list[dict[str, Any]]:
    """The sub-agent runs `session_id` started, read from their records in `store` (by any
    process, this one's included), oldest first: what `agents_wait` reports of each, with its
    `task`, `startedAt` and `interrupted` (a run in flight whose process stopped; the sweep of a
    live process with its profile resumes it). For views such as the Control UI; it changes
    nothing.
    """
    return [
        {
            **run.result(),
            "task": run.task,
            "startedAt": run.started_at,
            "interrupted": run.interrupted,
        }
        for run in await RunBook(store).load(session_id)
    ]


def _decoded(parent: str, key: str, text: str) -> SubagentRun | None:
    try:
        record = json.loads(text)
        if not isinstance(record, dict):
            raise TypeError("not an object")
        run = SubagentRun.from_record(cast(dict[str, Any], record))
    except (ValueError, TypeError, KeyError) as exc:
        _log.warning("skipping the unreadable sub-agent record %r of %r: %s", key, parent, exc)
        return None
    if run.parent != parent or run.run_id != key:
        _log.warning("skipping the sub-agent record %r of %r: it names another run", key, parent)
        return None
    return run
