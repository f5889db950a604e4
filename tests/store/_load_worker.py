"""A worker process of the cell-level scale-out load (`tests/store/_load.py`).

Run as `python -m tests.store._load_worker STORE SCHEMA LEDGER LEASE_S TIMEOUT_MS` from the
repository root. It opens the shared store (`open_store(STORE, schema=SCHEMA)`), prints
`{"ready": pid}`, then answers requests, one JSON object a line on stdin, each in a task of
its own: `{"id", "op": "exec", "session", "code"}` or `{"id", "op": "wait", "session",
"runId"}`. Each answer is one line on stdout: `{"id", "envelope"}`, or `{"id", "error",
"type"}` when the call raised. It keeps one `CodeMode` per session. End of stdin closes it.

Its tools write to the ledger, an SQLite file every worker shares (`Ledger`):

* `slowRead({cell, i, ms})`, replay-safe: sleeps `ms`, returns `{value: cell * 100 + i}`;
* `charge({key, ms})`, **not** replay-safe: records an attempt, sleeps `ms`, then records
  its effect under the idempotency key `key` (a repeated key keeps the first effect) and
  returns `{receipt: key, by: <pid of the effect>}`;

After each leg it records the wall-clock times of the leg's first and last progress update
(`on_update`: output items and tool calls, which only a running leg reports) in `legs`, so
the test can tell whether two workers ever ran one run at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import clawcell._runs._durable
from clawcell import CellUpdate, CodeMode, InputError, Limits, Tool
from clawcell.store import SessionStore, open_store

LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (key TEXT NOT NULL, pid INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS effects (key TEXT PRIMARY KEY, pid INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS legs (
    run_id TEXT NOT NULL, pid INTEGER NOT NULL, first REAL NOT NULL, last REAL NOT NULL
);
"""


class Ledger:
    """The side-effect ledger: an SQLite file shared by every worker of one load."""

    def __init__(self, path: Path) -> None:
        self._conn = sqlite3.connect(
            path, timeout=120, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(LEDGER_SCHEMA)

    def _run(self, statement: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(statement, params).fetchall()

    async def execute(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        return await asyncio.to_thread(self._run, statement, params)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def tools(ledger: Ledger) -> list[Tool]:
    """`slowRead` and `charge` (see the module docstring)."""
    pid = os.getpid()

    async def slow_read(args: dict[str, Any]) -> Any:
        await asyncio.sleep(args["ms"] / 1000)
        return {"value": args["cell"] * 100 + args["i"]}

    async def charge(args: dict[str, Any]) -> Any:
        key = args["key"]
        await ledger.execute("INSERT INTO attempts VALUES (?, ?, ?)", key, pid, time.time())
        await asyncio.sleep(args["ms"] / 1000)
        await ledger.execute(
            "INSERT INTO effects VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
            key,
            pid,
            time.time(),
        )
        rows = await ledger.execute("SELECT pid FROM effects WHERE key = ?", key)
        return {"receipt": key, "by": rows[0][0]}

    return [
        Tool(name="slowRead", execute=slow_read, replay_safe=True),
        Tool(name="charge", execute=charge),
    ]


def emit(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


class Worker:
    """One process's `CodeMode`s (one per session) over the shared store."""

    def __init__(self, store: SessionStore, ledger: Ledger, timeout_ms: int) -> None:
        self._store = store
        self._ledger = ledger
        self._tools = tools(ledger)
        self._limits = Limits(timeout_ms=timeout_ms)
        self._modes: dict[str, CodeMode] = {}

    def mode(self, session: str) -> CodeMode:
        mode = self._modes.get(session)
        if mode is None:
            mode = CodeMode(self._tools, limits=self._limits, store=self._store, session_id=session)
            self._modes[session] = mode
        return mode

    async def answer(self, request: dict[str, Any]) -> None:
        mode = self.mode(request["session"])
        seen: dict[str, list[float]] = {}  # run id → [first, last] update time

        def observe(update: CellUpdate) -> None:
            now = time.time()
            seen.setdefault(update.run_id, [now, now])[1] = now

        answer: dict[str, Any] = {"id": request["id"]}
        try:
            if request["op"] == "exec":
                answer["envelope"] = await mode.exec(request["code"], on_update=observe)
            else:
                answer["envelope"] = await mode.wait(request["runId"], on_update=observe)
        except InputError as exc:
            answer.update(error=exc.message, type="InputError")
        except Exception as exc:  # reported to the coordinator, which fails the load
            answer.update(error=repr(exc), type=type(exc).__name__)
        for run_id, (first, last) in seen.items():
            await self._ledger.execute(
                "INSERT INTO legs VALUES (?, ?, ?, ?)", run_id, os.getpid(), first, last
            )
        emit(answer)

    async def aclose(self) -> None:
        for mode in self._modes.values():
            await mode.aclose()


def dump_tasks(path: Path) -> None:
    """Write the stack of every task to `path` (on SIGUSR1: to see what a stuck worker awaits)."""
    with path.open("w") as out:
        for task in asyncio.all_tasks():
            task.print_stack(file=out)


async def serve(target: str, schema: str, ledger_path: Path, timeout_ms: int) -> None:
    ledger = Ledger(ledger_path)
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    dump = ledger_path.with_name(f"tasks-{os.getpid()}.txt")
    loop.add_signal_handler(signal.SIGUSR1, dump_tasks, dump)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: set[asyncio.Task[None]] = set()
    async with open_store(target, schema=schema) as store:
        worker = Worker(store, ledger, timeout_ms)
        emit({"ready": os.getpid()})
        while line := await reader.readline():
            task = asyncio.create_task(worker.answer(json.loads(line)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)
        await worker.aclose()
    ledger.close()


def main(argv: list[str]) -> None:
    target, schema, ledger_path, lease_s, timeout_ms = argv
    clawcell._runs._durable.LEASE_SECONDS = float(lease_s)
    asyncio.run(serve(target, schema, Path(ledger_path), int(timeout_ms)))


if __name__ == "__main__":
    main(sys.argv[1:])
