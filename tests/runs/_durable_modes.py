"""Code modes on one SQLite file, and worker processes on it (`tests/_restart_worker.py`): the
set-up of the tests of durable parked runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Tool
from clawcell.store import SQLiteStore
from tests.conftest import FAST

ROOT = Path(__file__).resolve().parents[2]
SESSION = "restart-session"  # the session of tests/_restart_worker.py
UNAVAILABLE = "code mode run is unavailable or expired."


def worker(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests._restart_worker", *args],
        cwd=ROOT,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_json_line(proc: subprocess.Popen[str]) -> Any:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"worker exited without output: {err}")
    return json.loads(line)


def durable(path: Path, tools: list[Tool] | None = None, **options: Any) -> CodeMode:
    options.setdefault("limits", FAST)
    return CodeMode(tools or [], store=SQLiteStore(path), session_id=SESSION, **options)


async def parked_runs(path: Path) -> list[str]:
    async with SQLiteStore(path) as store:
        return [parked.run_id for parked in await store.list_runs(SESSION)]
