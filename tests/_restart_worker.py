"""Child processes for the restart and cross-process tests of `tests/runs/test_continuations.py`.

Run as `python -m tests._restart_worker <command> ...` from the repository root:

* `park DB MARKER`: park `PARKING_CELL` in a durable `CodeMode`, print its `waiting`
  envelope as one JSON line, then hang (the test kills this process with SIGKILL). Its tools
  append a line to MARKER when called and never finish.
* `resume DB MARKER RUN_ID`: `wait` on the run in a fresh `CodeMode` until it settles, then
  read the stored note back through a new cell and straight from the database; print all
  three as one JSON line. Here the tools finish at once (and still append to MARKER).
* `race DB RUN_ID`: open a `CodeMode`, print `ready`, wait for a line on stdin, then `wait`
  on the run once and print the outcome as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from clawcell import CodeMode, InputError, Limits, Tool
from clawcell.store import SQLiteStore

SESSION = "restart-session"
PARK_LIMITS = Limits(timeout_ms=300)
"""How `park` parks: the cell's budget ends while its tools are still in flight."""
LIMITS = Limits(timeout_ms=60_000)
"""`resume` and `race` end by their cell, never by a deadline: a loaded machine must not turn
a continuation into a timeout."""

PARKING_CELL = """
text('before');
await store('note', { saved: 'before the restart' });
const fetched = fetchPage({ page: 1 });
const charged = charge({ amount: 5 }).then(
  (value) => ({ value }),
  (e) => ({ name: e.name, message: e.message, code: e.code, effectStatus: e.effectStatus }),
);
const result = { fetched: await fetched, charged: await charged, note: await load('note') };
text('after');
return result;
"""


def tools(marker: Path, phase: str) -> list[Tool]:
    """`fetchPage` (replay-safe) and `charge` (not); both log each call to `marker`."""
    hang = asyncio.Event()  # never set: in the `park` phase calls stay in flight

    async def fetch_page(tool_input: dict[str, Any]) -> Any:
        with marker.open("a") as log:
            log.write(f"fetchPage {phase}\n")
        if phase == "park":
            await hang.wait()
        return {"page": tool_input["page"], "fetchedBy": phase}

    async def charge(_: dict[str, Any]) -> Any:
        with marker.open("a") as log:
            log.write(f"charge {phase}\n")
        if phase == "park":
            await hang.wait()
        return "charged"

    return [
        Tool(name="fetchPage", execute=fetch_page, replay_safe=True),
        Tool(name="charge", execute=charge),
    ]


def _emit(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


async def park(db: Path, marker: Path) -> None:
    mode = CodeMode(
        tools(marker, "park"), limits=PARK_LIMITS, store=SQLiteStore(db), session_id=SESSION
    )
    _emit(await mode.exec(PARKING_CELL))
    await asyncio.Event().wait()  # hold the tools in flight until SIGKILL


async def resume(db: Path, marker: Path, run_id: str) -> None:
    async with CodeMode(
        tools(marker, "resume"), limits=LIMITS, store=SQLiteStore(db), session_id=SESSION
    ) as mode:
        envelope = await mode.wait(run_id)
        while envelope["status"] == "waiting":
            envelope = await mode.wait(run_id)
        reloaded = await mode.exec("return await load('note');")
    async with SQLiteStore(db) as store:
        stored = await store.get(SESSION, "note")
    _emit(
        {
            "envelope": envelope,
            "reloaded": reloaded.get("value"),
            "stored": None if stored is None else stored.json,
        }
    )


async def race(db: Path, run_id: str) -> None:
    async with CodeMode(limits=LIMITS, store=SQLiteStore(db), session_id=SESSION) as mode:
        _emit("ready")
        await asyncio.to_thread(sys.stdin.readline)
        try:
            envelope = await mode.wait(run_id)
        except InputError as exc:
            _emit({"error": type(exc).__name__, "message": exc.message})
        else:
            _emit({"status": envelope["status"], "value": envelope.get("value")})


def main(argv: list[str]) -> None:
    command, db, *rest = argv
    if command == "park":
        asyncio.run(park(Path(db), Path(rest[0])))
    elif command == "resume":
        asyncio.run(resume(Path(db), Path(rest[0]), rest[1]))
    elif command == "race":
        asyncio.run(race(Path(db), rest[0]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
