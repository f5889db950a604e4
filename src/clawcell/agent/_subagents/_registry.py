"""`RunRegistry`: the sub-agent runs one process knows — started, resumed, saved, stopped.

Runs this process drives have an asyncio task (`handle`); runs read from the store (an
earlier process's, or another worker's) have none until this process resumes them. Every
change of a driven run is saved through the `RunBook` under one lock, so a heartbeat can never
overwrite a run's final record. When a run ends, its parent's finished runs but the newest
`keep` are dropped from the store and from memory (running ones are all kept).

Every third of the lease the registry renews its runs' records (the heartbeat) and, with a
store that outlives the agent, sweeps the store's index of runs in flight: an orphan of a
profile it has (its worker died, or closed and left it interrupted) is claimed and resumed
here, whoever its parent is and whether or not the parent does anything. Runs of profiles
it lacks are left for a registry that has them (or for their parent's `sync`, which ends
them `failed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import socket
import time
import uuid
from collections.abc import Mapping
from typing import Final

from ...store import SessionStore, cancel_requested
from .._agent import Agent
from ._run import SubagentRun, cancel, drive, settled
from ._run_book import KEEP_FINISHED_RUNS, RunBook

__all__ = ["RESUME_TEXT", "RunRegistry"]

RESUME_TEXT: Final = (
    "The process running this task stopped before you finished (a restart). Your work so far "
    "is above; carry on from there and end with your final answer. The task:\n\n{task}"
)
"""The user message that resumes an interrupted child turn in its own session."""
_log = logging.getLogger("clawcell.agent")


class RunRegistry:
    """The runs of one `Subagents` runtime, by id, with their child sessions' depths.

    Args:
        store: The parent agent's store (the records live there).
        children: The child agent of each profile.
        durable: Whether the store outlives the agent: runs in flight at `close` are then
            left `interrupted` (resumable) rather than cancelled.
        keep: Finished runs kept per parent session (the newest by start).
        lease_seconds: A run whose record was not renewed for this long belongs to a
            process that is gone; records are renewed every third of it.
    """

    def __init__(
        self,
        store: SessionStore,
        children: Mapping[str, Agent],
        *,
        durable: bool,
        keep: int = KEEP_FINISHED_RUNS,
        lease_seconds: float = 30.0,
    ) -> None:
        self.runs: dict[str, SubagentRun] = {}
        self.depths: dict[str, int] = {}  # child session -> its depth (parents' are 0)
        self.closed = False
        self._children = children
        self._durable = durable
        self._keep = keep
        self._lease = lease_seconds
        self._book = RunBook(store)
        self._owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._save_lock = asyncio.Lock()
        # One sync or sweep at a time: each checks "driven here?" before a claim it awaits.
        self._sync_lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()
        # Runs that ended here but whose final record the store refused (it was down): their
        # record still says `running`, so each sweep saves them again before anything else,
        # or a sweep (here or on another worker) would resume a run that finished.
        self._unsaved: dict[str, SubagentRun] = {}
        self._heartbeat: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    @property
    def durable(self) -> bool:
        """Whether runs in flight survive `close` (as `interrupted`)."""
        return self._durable

    async def start(self, run: SubagentRun, text: str | None = None) -> None:
        """Drive `run` in this process (a new run, or an orphan resumed with `text`); its
        record is saved before this returns."""
        run.owner, run.interrupted, run.alive_at = self._owner, False, time.time()
        self.runs[run.run_id] = run
        self.depths[run.session_id] = run.depth
        await self._save(run)
        # A fresh context: the child's cells must not see the parent's caller or gate.
        run.handle = asyncio.get_running_loop().create_task(
            self._drive(run, text), name=f"sub-agent {run.run_id}", context=contextvars.Context()
        )
        run.handle.add_done_callback(lambda task: self._settled(run, task))
        self.tend()

    def tend(self) -> None:
        """Start the heartbeat and sweep (once; a no-op without a running loop or once
        closed)."""
        if self._heartbeat is not None or self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # built outside a loop: the first spawn or sync starts it
        self._heartbeat = loop.create_task(
            self._beat(), name="sub-agent heartbeat", context=contextvars.Context()
        )

    async def sync(self, parent: str) -> list[str]:
        """Take in the stored runs of `parent` this process does not drive and resume the
        orphans among them; the ids of the runs resumed here."""
        resumed: list[str] = []
        async with self._sync_lock:
            for stored in await self._book.load(parent):
                mine = self.runs.get(stored.run_id)
                if mine is not None and mine.handle is not None:
                    continue  # driven here: memory is ahead of the store
                self.runs[stored.run_id] = stored
                self.depths.setdefault(stored.session_id, stored.depth)
                if await self._take(stored):
                    await self._adopt(stored)
                    resumed.append(stored.run_id)
        return resumed

    async def sweep(self) -> list[str]:
        """Resume the orphans of the profiles this registry has among every parent's runs
        in flight (the store's index), and unlist the runs that ended; the ids resumed."""
        resumed: list[str] = []
        async with self._sync_lock:
            for run in list(self._unsaved.values()):
                await self._save(run)
            for parent, run_ids in (await self._book.indexed()).items():
                stored = {run.run_id: run for run in await self._book.load(parent)}
                for run_id in run_ids:
                    run = stored.get(run_id)
                    if run is None or run.status != "running":
                        await self._book.unindex(run_id)  # ended, pruned, or never saved
                        continue
                    mine = self.runs.get(run_id)
                    if (mine is not None and mine.handle is not None) or (
                        run.profile not in self._children
                    ):
                        continue
                    if await self._take(run):
                        self.runs[run_id] = run
                        await self._adopt(run)
                        resumed.append(run_id)
        return resumed

    async def _take(self, run: SubagentRun) -> bool:
        """Whether this registry won the claim to resume the orphan `run`."""
        if self.closed or not run.orphaned(time.time(), self._lease):
            return False
        if not await self._book.claim(run, self._owner):
            return False
        run.resumes += 1
        return True

    def cancel_tree(self, session_id: str, reason: str) -> list[asyncio.Task[None]]:
        """Cancel the runs `session_id` started here, and theirs; their tasks."""
        tasks: list[asyncio.Task[None]] = []
        for run in [r for r in self.runs.values() if r.parent == session_id]:
            tasks += self.cancel_tree(run.session_id, reason)
            if run.handle is not None and not run.handle.done():
                cancel(run, reason)
                tasks.append(run.handle)
        return tasks

    async def close(self) -> None:
        """Stop every run driven here (interrupted when durable, else cancelled) and wait
        until their records are saved."""
        self.closed = True
        self._closing.set()  # the heartbeat ends even if a store call swallowed its cancel
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
        tasks = [r.handle for r in self.runs.values() if r.handle and not r.handle.done()]
        for run in self.runs.values():
            if self._durable and run.handle is not None and not run.handle.done():
                run.interrupted = True
                run.handle.cancel()
            else:
                cancel(run, "cancelled: the parent agent closed.")
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*self._background, return_exceptions=True)

    async def _adopt(self, run: SubagentRun) -> None:
        if run.profile in self._children:
            await self.start(run, RESUME_TEXT.format(task=run.task))
            return
        run.status, run.interrupted = "failed", False
        run.error = (
            f"interrupted by a restart and not resumed: this process has no sub-agent "
            f"profile {run.profile!r} (have {sorted(self._children)!r})."
        )
        await self._save(run)

    async def _drive(self, run: SubagentRun, text: str | None) -> None:
        try:
            await drive(run, self._children[run.profile], text)
        finally:
            await self._save(run)

    def _settled(self, run: SubagentRun, task: asyncio.Task[None]) -> None:
        if task.cancelled():  # cancelled before `_drive` ran: nothing saved its end
            settled(run)
            saving = asyncio.ensure_future(self._save(run))
            self._background.add(saving)
            saving.add_done_callback(self._background.discard)

    async def _save(self, run: SubagentRun, *, beat: bool = False) -> None:
        async with self._save_lock:  # a heartbeat never overwrites a run's final record
            if beat:
                if run.status != "running" or run.handle is None or run.handle.done():
                    return
                run.alive_at = time.time()
            saved = await self._book.save(run)
        if beat or run.status == "running":
            return
        if not saved:
            self._unsaved[run.run_id] = run
            return
        self._unsaved.pop(run.run_id, None)
        await self._retain(run.parent)

    async def _retain(self, parent: str) -> None:
        """Keep `parent`'s newest `keep` finished runs, in the store and in memory."""
        await self._book.prune(parent, self._keep)
        finished = sorted(
            (r for r in self.runs.values() if r.parent == parent and r.status != "running"),
            key=lambda r: (r.started_at, r.run_id),
        )
        for run in finished[: max(0, len(finished) - self._keep)]:
            del self.runs[run.run_id]
            self.depths.pop(run.session_id, None)

    async def _beat(self) -> None:
        # A cancelled heartbeat stops even when a store call it was in swallowed the
        # cancellation (`cancel_requested`): an event loop closing with the agent still open
        # cancels this task and then waits for it, forever if it looped on.
        while not self.closed and not cancel_requested():
            if self._durable:  # only a store that outlives the agent can hold orphans
                try:
                    await self.sweep()
                except Exception:  # the next beat sweeps again; the heartbeat must go on
                    _log.warning("the sweep of sub-agent runs failed", exc_info=True)
            if cancel_requested():
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._lease / 3):
                    await self._closing.wait()
            if self.closed or cancel_requested():
                return
            for run in [r for r in self.runs.values() if r.owner == self._owner]:
                await self._save(run, beat=True)
