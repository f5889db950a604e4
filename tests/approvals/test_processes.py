"""Approvals across real processes on one SQLite file: a decision made by another process, and
workers SIGKILLed before and during an approved call (`tests/approvals/_worker.py`).

The cell calls `pay` and `refund`, both needing approval; every run of a tool appends a line
to a marker file, so the tests see exactly which calls ran, and in which process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from clawcell.approvals._gate import INTERRUPTED_AFTER_APPROVAL

ROOT = Path(__file__).resolve().parents[2]
WORKER = [sys.executable, "-m", "tests.approvals._worker"]
DENIED = {
    "code": "approval_denied",
    "message": 'Tool "refund" was not approved: denied.',
    "effectStatus": "unknown",  # every coded tool error says so (spec: never a permission to retry)
}


class Worker:
    """A `serve` process of `tests/approvals/_worker.py`."""

    def __init__(self, db: Path, marker: Path, *, hang: bool = False) -> None:
        self.proc = subprocess.Popen(
            [*WORKER, "serve", str(db), str(marker), "hang" if hang else "finish"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def read(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"worker exited with {self.proc.wait(timeout=60)} before answering"
        return json.loads(line)

    def ask(self, command: str) -> Any:
        self.send(command)
        return self.read()

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.communicate(timeout=60)  # also closes the pipes
        assert self.proc.returncode == -signal.SIGKILL

    def close(self) -> None:
        """End the worker's input; it closes its runtime and exits cleanly."""
        self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0


def decide(db: Path, run_id: str, tool: str, decision: str) -> str:
    """Decide from a process of its own; the approval id it decided."""
    done = subprocess.run(
        [*WORKER, "decide", str(db), run_id, tool, decision],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout)


def ran(marker: Path, worker: Worker) -> list[str]:
    """The tools that ran, named with `mine` when `worker` ran them."""
    if not marker.exists():
        return []
    lines = [line.split() for line in marker.read_text().splitlines()]
    return [f"{name} {'mine' if int(pid) == worker.proc.pid else 'other'}" for name, pid in lines]


def parked_for_approval(worker: Worker) -> str:
    parked = worker.ask("exec")
    assert (parked["status"], parked["reason"]) == ("waiting", "approval"), parked
    assert sorted(a["tool"] for a in parked["pendingApprovals"]) == ["pay", "refund"]
    return parked["runId"]


def test_a_decision_from_another_process_is_seen_by_the_worker(tmp_path: Path) -> None:
    db, marker = tmp_path / "state.db", tmp_path / "ran.log"
    worker = Worker(db, marker)
    try:
        run_id = parked_for_approval(worker)
        decide(db, run_id, "pay", "approve")
        decide(db, run_id, "refund", "deny")
        done = worker.ask(f"wait {run_id}")
        assert ran(marker, worker) == ["pay mine"]
    finally:
        worker.close()
    assert done["status"] == "completed", done
    assert done["value"] == {"paid": {"tool": "pay", "amount": 5}, "refunded": DENIED}


def test_an_approved_call_runs_once_after_the_worker_is_killed_before_dispatching_it(
    tmp_path: Path,
) -> None:
    db, marker = tmp_path / "state.db", tmp_path / "ran.log"
    first = Worker(db, marker)
    run_id = parked_for_approval(first)
    decide(db, run_id, "pay", "approve")
    first.kill()  # decided, not dispatched: the worker never got a `wait`
    assert ran(marker, first) == []
    second = Worker(db, marker)
    try:
        still = second.ask(f"wait {run_id}")  # `pay` runs; `refund` is still undecided
        assert ran(marker, second) == ["pay mine"]
        assert (still["status"], still["reason"]) == ("waiting", "approval"), still
        assert [a["tool"] for a in still["pendingApprovals"]] == ["refund"]
        decide(db, run_id, "refund", "deny")
        done = second.ask(f"wait {run_id}")
    finally:
        second.close()
    assert done["value"] == {"paid": {"tool": "pay", "amount": 5}, "refunded": DENIED}
    assert ran(marker, second) == ["pay mine"]  # nothing unapproved ran, nothing ran twice


def test_an_approved_call_killed_inside_its_tool_is_never_run_again(tmp_path: Path) -> None:
    db, marker = tmp_path / "state.db", tmp_path / "ran.log"
    first = Worker(db, marker, hang=True)
    run_id = parked_for_approval(first)
    decide(db, run_id, "pay", "approve")
    decide(db, run_id, "refund", "deny")
    first.send(f"wait {run_id}")
    assert first.read() == {"event": "pay started"}
    first.kill()  # inside `pay`, after it was handed to the tool
    second = Worker(db, marker)
    try:
        done = second.ask(f"wait {run_id}")
    finally:
        second.close()
    assert done["status"] == "completed", done
    assert done["value"] == {
        "paid": {
            "code": "tool_error",
            "message": INTERRUPTED_AFTER_APPROVAL,
            "effectStatus": "unknown",
        },
        "refunded": DENIED,
    }
    assert ran(marker, second) == ["pay other"]
