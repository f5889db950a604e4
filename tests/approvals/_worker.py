"""Processes for `tests/approvals/test_processes.py`: a worker and a deciding "UI".

Run from the repository root as `python -m tests.approvals._worker COMMAND DB ...`:

* `serve DB MARKER HANG`: a worker. Reads commands on stdin, one a line, and answers each with
  one JSON line on stdout: `exec` runs `CELL`, `wait RUN_ID` continues a run. Its tools `pay`
  and `refund` both need approval; each appends `<name> <pid>` to MARKER when it runs. With
  HANG `hang`, `pay` prints `{"event": "pay started"}` and then never finishes (the test
  SIGKILLs the worker there). Leases last 2 s, so a run held by a killed worker is free soon.
* `decide DB RUN_ID TOOL DECISION`: another process, as the UI would be: finds the pending
  approval of TOOL in the run, records DECISION (`approve` or `deny`) and prints the
  approval id.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any, Literal

import clawcell._runs._durable
from clawcell import CodeMode, Limits, Tool
from clawcell.store import SQLiteStore

SESSION = "approvals"
LIMITS = Limits(timeout_ms=60_000)

CELL = """
const outcome = (promise) => promise.then(
  (value) => value,
  (e) => ({ code: e.code, message: e.message, effectStatus: e.effectStatus }),
);
const paid = outcome(pay({ amount: 5 }));
const refunded = outcome(refund({ amount: 2 }));
return { paid: await paid, refunded: await refunded };
"""


def emit(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def tools(marker: Path, hang: bool) -> list[Tool]:
    """`pay` and `refund`, both `approval="always"`, logging each run to `marker`."""

    def logged(name: str) -> Any:
        async def execute(params: dict[str, Any]) -> Any:
            with marker.open("a") as log:
                log.write(f"{name} {os.getpid()}\n")
            if hang and name == "pay":
                emit({"event": "pay started"})
                await asyncio.Event().wait()
            return {"tool": name, **params}

        return execute

    return [Tool(name=name, execute=logged(name), approval="always") for name in ("pay", "refund")]


async def serve(db: Path, marker: Path, hang: bool) -> None:
    clawcell._runs._durable.LEASE_SECONDS = 2.0
    loop = asyncio.get_running_loop()
    async with (
        SQLiteStore(db) as store,
        CodeMode(tools(marker, hang), limits=LIMITS, store=store, session_id=SESSION) as mode,
    ):
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, *rest = line.split()
            if command == "exec":
                emit(await mode.exec(CELL))
            else:
                emit(await mode.wait(rest[0]))


async def decide(db: Path, run_id: str, tool: str, decision: str) -> None:
    async with (
        SQLiteStore(db) as store,
        CodeMode(tools(db, False), limits=LIMITS, store=store, session_id=SESSION) as ui,
    ):
        [approval] = [a for a in await ui.pending_approvals(run_id) if a.tool == tool]
        verdict: Literal["approve", "deny"] = "approve" if decision == "approve" else "deny"
        await ui.decide(run_id, approval.id, verdict, by="ui")
    emit(approval.id)


def main(argv: list[str]) -> None:
    command, db, *rest = argv
    if command == "serve":
        asyncio.run(serve(Path(db), Path(rest[0]), rest[1] == "hang"))
    elif command == "decide":
        asyncio.run(decide(Path(db), rest[0], rest[1], rest[2]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
