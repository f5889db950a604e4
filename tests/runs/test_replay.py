"""Replay policy (`_runs/_replay.py`): which requests run again after a restart, what a
restart-safe cell may ask for, and the envelope's `replaySafe`."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Tool
from clawcell._cell._pending import RESTART_MESSAGE
from clawcell._runs._replay import RESTART_SAFE_TOOLS
from tests.conftest import FAST, failure, run
from tests.runs._durable_modes import parked_runs, read_json_line, worker


async def _double(tool_input: dict[str, Any]) -> Any:
    return tool_input["n"] * 2


def _tools() -> list[Tool]:
    return [
        Tool(name="lookup", execute=_double, replay_safe=True),
        Tool(name="charge", execute=_double),
    ]


def _exec(code: str, *, restart_safe: bool) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with CodeMode(_tools(), limits=FAST) as mode:
            return await mode.call_tool("exec", {"code": code, "restartSafe": restart_safe})

    return run(main())


def test_a_restart_safe_cell_may_call_a_replay_safe_tool() -> None:
    envelope = _exec("return await lookup({ n: 4 });", restart_safe=True)
    assert (envelope["status"], envelope["value"]) == ("completed", 8)


def test_a_restart_safe_cell_that_calls_a_tool_not_replay_safe_fails_as_bad_input() -> None:
    # Not a catchable rejection: the cell asked for what its mode forbids, and nothing ran.
    envelope = _exec(
        "try { await charge({ n: 4 }); return 'ran'; } catch (e) { return e.message; }",
        restart_safe=True,
    )
    assert failure(envelope) == ("invalid_input", "input", RESTART_SAFE_TOOLS, False)


def test_a_cell_that_is_not_restart_safe_may_call_any_tool() -> None:
    assert _exec("return await charge({ n: 4 });", restart_safe=False)["value"] == 8


@pytest.mark.parametrize(
    ("restart_safe", "pending", "replay_safe"),
    [
        (True, "lookup", True),
        (True, "yield", True),
        (False, "lookup", False),
        (False, "yield", False),
    ],
)
def test_a_parked_cell_reports_replay_safe_only_when_restart_safe(
    restart_safe: bool, pending: str, replay_safe: bool
) -> None:
    # `yield` parks at once; a pending replay-safe call is as safe as a `yield` to replay.
    code = (
        "await yield_control(); return 1;"
        if pending == "yield"
        else "const p = lookup({ n: 1 }); await yield_control(); return await p;"
    )
    envelope = _exec(code, restart_safe=restart_safe)
    assert (envelope["status"], envelope["replaySafe"]) == ("waiting", replay_safe)


def test_a_cell_parked_before_sigkill_completes_in_a_new_process(tmp_path: Path) -> None:
    db, marker = tmp_path / "session.sqlite", tmp_path / "calls.log"
    parker = worker("park", str(db), str(marker))
    try:
        parked = read_json_line(parker)
    finally:
        os.kill(parker.pid, signal.SIGKILL)
        parker.communicate(timeout=10)
    assert parker.returncode == -signal.SIGKILL
    assert parked["status"] == "waiting", parked
    assert parked["reason"] == "pending_tools"
    assert [call["method"] for call in parked["pendingToolCalls"]] == ["callValue", "callValue"]
    assert parked["output"] == [{"type": "text", "text": "before"}]
    # Both tools really started before the kill, and the park was committed first.
    assert Counter(marker.read_text().splitlines()) == {"fetchPage park": 1, "charge park": 1}
    assert run(parked_runs(db)) == [parked["runId"]]

    resumer = worker("resume", str(db), str(marker), parked["runId"])
    out, err = resumer.communicate(timeout=30)
    assert resumer.returncode == 0, err
    result = json.loads(out)
    envelope = result["envelope"]
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == {
        "fetched": {"page": 1, "fetchedBy": "resume"},
        "charged": {
            "name": "Error",
            "message": RESTART_MESSAGE,
            "code": "tool_error",
            "effectStatus": "unknown",
        },
        "note": {"saved": "before the restart"},
    }
    assert envelope["output"] == [{"type": "text", "text": "after"}]
    # The replay-safe call ran again exactly once; the other one never ran a second time.
    assert Counter(marker.read_text().splitlines()) == {
        "fetchPage park": 1,
        "charge park": 1,
        "fetchPage resume": 1,
    }
    # The buffered store write was committed when the cell completed.
    assert result["reloaded"] == {"saved": "before the restart"}
    assert json.loads(result["stored"]) == {"saved": "before the restart"}
    assert run(parked_runs(db)) == []
