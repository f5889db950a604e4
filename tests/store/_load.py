"""The cell-level scale-out load: worker processes share one store, and cells move between them.

Used by `tests/store/test_cells_scale_out.py` (a short run) and `bench/bench_scale_out.py`
(500 cells). `run_load` starts `LoadPlan.workers` processes (`tests/store/_load_worker.py`)
on one store and drives `LoadPlan.cells` cells through them: each cell's `exec` and every
`wait` goes to a worker picked at random (and a share of the `wait`s to two workers at
once), so a cell parked by one worker is continued by another. Meanwhile workers are
SIGKILLed (`LoadPlan.kill_after_waits` picks the `wait` requests whose worker is killed right
after it got them; `LoadPlan.kill_every_s` kills one at random intervals) and restarted.
`check_load` (`_load_checks.py`) then proves, from the answers and the workers' ledger:

* every cell completed with the right value (from its envelope, or, when its last answer
  was lost with a killed worker, from the `store()` write its completion committed);
* every `charge` (not replay-safe) took effect at most once (one ledger row per idempotency
  key), every receipt a cell got is in the ledger, and every other outcome is the restart
  error with `effectStatus: "unknown"`;
* a `charge` was only ever attempted again after the worker of its earlier attempt had been
  killed (the dead leg is re-run from the last park, which is documented);
* no run was run by two workers at once: the legs of each run (from the first to the last
  progress update a worker saw in it) never overlap.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clawcell.store import open_store

ROOT = Path(__file__).resolve().parents[2]
DONE_PREFIX = "done:"
UNAVAILABLE = "code mode run is unavailable or expired."

CELL = """\
const cell = {cell};
await yield_control('start');
text('reading');
const first = slowRead({{ cell, i: 1, ms: {read1} }});
const paid = charge({{ key: 'c{cell}.a{attempt}', ms: {charge} }}).then(
  (receipt) => receipt,
  (e) => ({{ code: e.code, effectStatus: e.effectStatus }}),
);
const a = await first;
text('yielding');
await yield_control('middle');
text('reading again');
const b = await slowRead({{ cell, i: 2, ms: {read2} }});
const result = {{ cell, sum: a.value + b.value, paid: await paid }};
await store('done:' + cell, result);
text('done');
return result;
"""
"""A cell: it parks at once (`exec`), on a slow read or its charge, and on a yield."""


@dataclass(frozen=True, kw_only=True)
class LoadPlan:
    """What one load does."""

    cells: int
    workers: int
    concurrency: int
    """Cells in progress at once."""
    sessions: int = 20
    lease_seconds: float = 5.0
    timeout_ms: int = 1000
    think_s: float = 0.05
    """Longest pause (uniform) between an answer and the next `wait`, as a model takes; after
    a park on running tools the pause is one budget longer, so they settle before the next
    leg rather than in its last milliseconds (a reply that lands as the budget runs out
    would leave the guest no time to run: the leg would fail with `timeout`)."""
    kill_after_waits: frozenset[int] = frozenset()
    kill_every_s: tuple[float, float] | None = None
    stall_s: float = 180.0
    """A hang guard: with no answer for this long, workers dump their tasks and are killed."""
    duplicate_waits: float = 0.25
    """The share of `wait`s sent to two workers at once (exactly one may run each leg)."""
    seed: int = 0


class WorkerGone(Exception):
    """The worker died before answering."""


class Worker:
    """One worker process and the requests it has not answered yet."""

    def __init__(self, plan: LoadPlan, target: str, schema: str, ledger: Path) -> None:
        self._args = [target, schema, str(ledger), str(plan.lease_seconds), str(plan.timeout_ms)]
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._reader: asyncio.Task[None] | None = None
        self.pid = 0

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.store._load_worker",
            *self._args,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 24,
        )
        assert self._proc.stdout is not None
        ready = json.loads(await self._proc.stdout.readline())
        self.pid = ready["ready"]
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while line := await self._proc.stdout.readline():
            answer = json.loads(line)
            future = self._pending.pop(answer["id"], None)
            if future is not None and not future.done():
                future.set_result(answer)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(WorkerGone())
        self._pending.clear()

    async def request(self, **fields: Any) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdin is not None
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        try:
            self._proc.stdin.write((json.dumps({"id": self._next, **fields}) + "\n").encode())
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._pending.pop(self._next, None)
            raise WorkerGone() from exc
        return await future

    def signal(self, number: int) -> None:
        assert self._proc is not None
        self._proc.send_signal(number)

    async def kill(self) -> float:
        """SIGKILL the process; returns the wall-clock time by which it was dead."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGKILL)
        await self._proc.wait()
        dead_at = time.time()
        if self._reader is not None:
            await self._reader
        return dead_at

    async def stop(self) -> None:
        """End of input: the worker closes its runtimes and its store, then exits."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.close()
        await self._proc.wait()
        if self._reader is not None:
            await self._reader


@dataclass
class LoadResult:
    """What a load observed; `check_load` judges it."""

    plan: LoadPlan
    ledger: Path
    values: dict[int, Any] = field(default_factory=dict[int, Any])
    recovered: int = 0
    """Cells whose completed envelope was lost with a killed worker (value read from the store)."""
    attempts: dict[int, int] = field(default_factory=dict[int, int])
    wait_ms: list[float] = field(default_factory=list[float])
    exec_ms: list[float] = field(default_factory=list[float])
    kills: dict[int, float] = field(default_factory=dict[int, float])
    """Killed worker pid → the wall-clock time by which it was dead."""
    retries: dict[str, int] = field(default_factory=dict[str, int])
    problems: list[str] = field(default_factory=list[str])
    elapsed_s: float = 0.0


def cell_code(cell: int, attempt: int, rng: random.Random, budget_ms: int) -> str:
    """A cell whose tools are each quick (well inside a leg's budget) or slow (longer than
    one budget, so the leg parks on them), at random."""

    def duration() -> int:
        if rng.random() < 0.5:
            return rng.randrange(10, 60)
        return rng.randrange(int(budget_ms * 1.2), int(budget_ms * 1.6))

    return CELL.format(
        cell=cell, attempt=attempt, read1=duration(), charge=duration(), read2=duration()
    )


def expected_sum(cell: int) -> int:
    return 2 * cell * 100 + 3


class Load:
    """Drives the cells of one `LoadPlan` through a set of workers."""

    def __init__(self, plan: LoadPlan, target: str, schema: str, ledger: Path) -> None:
        self.plan, self._target, self._schema, self._ledger = plan, target, schema, ledger
        self.result = LoadResult(plan=plan, ledger=ledger)
        self._rng = random.Random(plan.seed)
        self._workers: list[Worker] = []
        self._waits = 0
        self._last_answer = 0.0
        self._store = open_store(target, schema=schema)

    def _count(self, what: str) -> None:
        self.result.retries[what] = self.result.retries.get(what, 0) + 1

    async def _spawn(self) -> Worker:
        worker = Worker(self.plan, self._target, self._schema, self._ledger)
        await worker.start()
        return worker

    async def _replace(self, worker: Worker) -> None:
        if worker not in self._workers:
            return
        self._workers.remove(worker)
        self.result.kills[worker.pid] = await worker.kill()
        self._workers.append(await self._spawn())

    async def _call(self, worker: Worker, **fields: Any) -> dict[str, Any]:
        if fields["op"] == "wait":
            self._waits += 1
            if self._waits in self.plan.kill_after_waits:
                answer = asyncio.ensure_future(worker.request(**fields))
                await asyncio.sleep(self._rng.uniform(0, 0.05))
                await self._replace(worker)
                return await answer
        return await worker.request(**fields)

    async def _timed(self, bucket: list[float], worker: Worker, **fields: Any) -> dict[str, Any]:
        start = time.perf_counter()
        answer = await self._call(worker, **fields)
        self._last_answer = time.monotonic()
        if "envelope" in answer:
            bucket.append((time.perf_counter() - start) * 1000)
        return answer

    async def _waits_once(self, session: str, run_id: str) -> list[dict[str, Any]]:
        """One `wait` on a random worker, or, as a retrying client would, on two at once."""
        twice = len(self._workers) > 1 and self._rng.random() < self.plan.duplicate_waits
        workers = self._rng.sample(self._workers, 2 if twice else 1)
        if twice:
            self._count("duplicate_waits")
        answers = await asyncio.gather(
            *(
                self._timed(self.result.wait_ms, w, op="wait", session=session, runId=run_id)
                for w in workers
            ),
            return_exceptions=True,
        )
        for answer in answers:
            if isinstance(answer, WorkerGone):
                self._count("wait_lost")
            elif isinstance(answer, BaseException):
                raise answer
        return [answer for answer in answers if isinstance(answer, dict)]

    async def _drive(self, cell: int, slots: asyncio.Semaphore) -> None:
        async with slots:
            session = f"s{cell % self.plan.sessions}"
            attempt = 0
            while cell not in self.result.values:
                attempt += 1
                code = cell_code(cell, attempt, random.Random(cell), self.plan.timeout_ms)
                try:
                    answer = await self._timed(
                        self.result.exec_ms,
                        self._rng.choice(self._workers),
                        op="exec",
                        session=session,
                        code=code,
                    )
                except WorkerGone:
                    self._count("exec_lost")
                    continue
                envelope = answer.get("envelope")
                if envelope is None or envelope["status"] != "waiting":
                    self.result.problems.append(f"cell {cell}: exec answered {answer!r}")
                    return
                await self._follow(cell, session, envelope["runId"])
            self.result.attempts[cell] = attempt

    async def _follow(self, cell: int, session: str, run_id: str) -> None:
        on_tools = False
        while cell not in self.result.values:
            pause = self._rng.uniform(0, self.plan.think_s)
            await asyncio.sleep(pause + (self.plan.timeout_ms / 1000 if on_tools else 0))
            answers = await self._waits_once(session, run_id)
            envelopes = [answer["envelope"] for answer in answers if "envelope" in answer]
            on_tools = any(e.get("reason") == "pending_tools" for e in envelopes)
            for envelope in envelopes:
                if envelope["status"] == "completed":
                    self.result.values[cell] = envelope["value"]
                elif envelope["status"] == "failed" and envelope.get("code") == "stale_run":
                    self._count("stale_run")
                elif envelope["status"] == "failed":
                    self.result.problems.append(f"cell {cell}: wait failed {envelope!r}")
                    return
            errors = [answer for answer in answers if "envelope" not in answer]
            if cell in self.result.values or not errors or envelopes:
                continue
            if any(answer["error"] != UNAVAILABLE for answer in errors) or not await self._settled(
                cell, session, run_id
            ):
                self.result.problems.append(f"cell {cell}: wait answered {errors!r}")
                return

    async def _settled(self, cell: int, session: str, run_id: str) -> bool:
        """After `unavailable`: the run completed (its answer lost), or is held: retry."""
        done = await self._store.get(session, f"{DONE_PREFIX}{cell}")
        if done is not None:
            self.result.values[cell] = json.loads(done.json)
            self.result.recovered += 1
            return True
        if await self._store.load_run(session, run_id) is None:
            return False
        self._count("held")
        return True

    async def _killer(self, done: asyncio.Event) -> None:
        every = self.plan.kill_every_s
        if every is None:
            return
        while not done.is_set():
            try:
                await asyncio.wait_for(done.wait(), self._rng.uniform(*every))
            except TimeoutError:
                await self._replace(self._rng.choice(self._workers))

    async def run(self) -> LoadResult:
        self._workers = list(
            await asyncio.gather(*(self._spawn() for _ in range(self.plan.workers)))
        )
        slots = asyncio.Semaphore(self.plan.concurrency)
        done = asyncio.Event()
        killer = asyncio.create_task(self._killer(done))
        start = time.perf_counter()
        cells = asyncio.gather(*(self._drive(cell, slots) for cell in range(self.plan.cells)))
        self._last_answer = time.monotonic()
        try:
            while not cells.done():
                try:
                    await asyncio.wait_for(asyncio.shield(cells), self.plan.stall_s / 4)
                except TimeoutError:
                    if time.monotonic() - self._last_answer > self.plan.stall_s:
                        await self._stuck(cells)
        finally:
            self.result.elapsed_s = time.perf_counter() - start
            done.set()
            await killer
            await asyncio.gather(*(worker.stop() for worker in self._workers))
            await self._store.close()
        return self.result

    async def _stuck(self, cells: asyncio.Future[Any]) -> None:
        """No answer for `stall_s`: have every worker dump its tasks, then kill them all."""
        for worker in self._workers:
            worker.signal(signal.SIGUSR1)
        await asyncio.sleep(1)
        self.result.problems.append(f"no answer for {self.plan.stall_s} s; the workers' tasks:")
        for dump in sorted(self._ledger.parent.glob("tasks-*.txt")):
            self.result.problems.append(f"{dump.name}:\n{dump.read_text()}")
        cells.cancel()
        for worker in list(self._workers):
            self._workers.remove(worker)
            await worker.kill()


async def run_load(plan: LoadPlan, target: str, schema: str, ledger: Path) -> LoadResult:
    """Run one load (see the module docstring); `check_load` the result."""
    return await Load(plan, target, schema, ledger).run()
