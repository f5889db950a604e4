"""Continuations through `CodeMode`: durable parking in SQLite, `wait` after SIGKILL in a new
process, replay safety, racing waits, capacity, TTL expiry, snapshot limits, host calls that
keep running while a cell is parked, and output delivered incrementally across restarts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clawcell import CodeMode, InputError, Limits, Tool
from clawcell._cell._cell import RESTART_MESSAGE
from clawcell.store import SQLiteStore
from tests.conftest import FAST, failure, run

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


def fake_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Patch `time` in the modules that keep parked runs; returns the mutable "now".

    It starts an hour ahead of the wall clock, so the store (which checks expiry and leases on
    the real clock) never finds a run expired however slowly the test runs: expiry is the
    lifecycle's decision on this clock.
    """
    now = [time.time() + 3600]
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    clock["monotonic"] = clock["time"] = lambda: now[0]
    for name in ("clawcell._runs._lifecycle", "clawcell._runs._parked"):
        module = sys.modules[name]
        monkeypatch.setattr(module, "time", SimpleNamespace(**clock))
    return now


# -- restart --------------------------------------------------------------------------


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


def test_two_processes_racing_to_wait_on_one_run_continue_it_once(tmp_path: Path) -> None:
    db = tmp_path / "session.sqlite"

    async def park() -> str:
        async with durable(db) as mode:
            parked = await mode.exec("await yield_control('race');\nreturn 'continued';")
        return parked["runId"]

    run_id = run(park())
    racers = [worker("race", str(db), run_id, stdin=subprocess.PIPE) for _ in range(2)]
    try:
        assert [read_json_line(racer) for racer in racers] == ["ready", "ready"]
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        outcomes = [read_json_line(racer) for racer in racers]
    finally:
        for racer in racers:
            racer.communicate(timeout=30)
    assert sorted(outcomes, key=json.dumps) == [
        {"error": "InputError", "message": UNAVAILABLE},
        {"status": "completed", "value": "continued"},
    ]
    assert run(parked_runs(db)) == []


def test_output_stays_incremental_across_waits_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "session.sqlite"
    code = (
        "text('one');\nawait yield_control();\ntext('two');\nawait yield_control();\n"
        "text('three');\nreturn 'done';"
    )

    async def main() -> list[dict[str, Any]]:
        async with durable(db) as first:
            envelopes = [await first.exec(code)]
        async with durable(db) as second:  # a new runtime on the same database
            envelopes.append(await second.wait(envelopes[0]["runId"]))
        async with durable(db) as third:
            envelopes.append(await third.wait(envelopes[0]["runId"]))
        return envelopes

    envelopes = run(main())
    assert [e["status"] for e in envelopes] == ["waiting", "waiting", "completed"]
    assert [e["output"] for e in envelopes] == [
        [{"type": "text", "text": "one"}],
        [{"type": "text", "text": "two"}],
        [{"type": "text", "text": "three"}],
    ]
    assert envelopes[2]["value"] == "done"


def test_parked_runs_are_looked_up_within_their_session(tmp_path: Path) -> None:
    db = tmp_path / "session.sqlite"

    async def main() -> tuple[str, Any]:
        async with durable(db) as mode:
            parked = await mode.exec("await yield_control();\nreturn 'mine';")
        async with CodeMode(limits=FAST, store=SQLiteStore(db), session_id="other") as other:
            with pytest.raises(InputError) as caught:
                await other.wait(parked["runId"])
        async with durable(db) as mode:
            resumed = await mode.wait(parked["runId"])
        return caught.value.message, resumed["value"]

    assert run(main()) == (UNAVAILABLE, "mine")


# -- races, capacity, expiry, size --------------------------------------------------------


def test_a_second_wait_in_one_process_is_refused_with_a_durable_store(tmp_path: Path) -> None:
    gate = asyncio.Event()

    async def slow(_: dict[str, Any]) -> Any:
        await gate.wait()
        return "done"

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with durable(tmp_path / "s.sqlite", [Tool(name="slow", execute=slow)]) as mode:
            parked = await mode.exec("return await slow();")
            assert parked["status"] == "waiting"
            first = asyncio.ensure_future(mode.wait(parked["runId"]))
            await asyncio.sleep(0)  # let the first wait start; no time passes
            second = await mode.call_tool("wait", {"runId": parked["runId"]})
            gate.set()
            return await asyncio.wait_for(first, 10), second

    first, second = run(main())
    assert failure(second) == (
        "invalid_input",
        "input",
        "code mode run is already being resumed.",
        False,
    )
    assert first["value"] == "done"


def test_the_65th_parked_run_is_refused_with_a_durable_store(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"

    async def main() -> tuple[list[str], dict[str, Any], list[str], dict[str, Any]]:
        async with durable(db) as mode:
            parked = [await mode.exec("await yield_control();\nreturn 1;") for _ in range(64)]
            refused = await mode.exec("await yield_control();\nreturn 1;")
            saved = await parked_runs(db)
            resumed = await mode.wait(parked[0]["runId"])
            return [p["runId"] for p in parked], refused, saved, resumed

    run_ids, refused, saved, resumed = run(main())
    assert failure(refused)[:3] == ("invalid_input", "input", "too many suspended code mode runs.")
    assert sorted(saved) == sorted(run_ids)  # the refused cell was never committed
    assert resumed["value"] == 1


def test_a_durable_parked_run_expires_after_its_ttl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.sqlite"
    now = fake_clock(monkeypatch)
    limits = Limits(timeout_ms=250, snapshot_ttl_seconds=1)

    async def main() -> list[Any]:
        async with durable(db, limits=limits) as mode:
            kept = await mode.exec("await yield_control();\nreturn 'kept';")
            lost = await mode.exec("await yield_control();\nreturn 'lost';")
            gone = await mode.exec("await yield_control();\nreturn 'gone';")
            now[0] += 0.9
            kept_value = (await mode.wait(kept["runId"]))["value"]
            now[0] += 0.2  # `lost` and `gone` have been idle for 1.1 s
            with pytest.raises(InputError) as in_process:
                await mode.wait(lost["runId"])
        async with durable(db, limits=limits) as restarted:
            with pytest.raises(InputError) as after_restart:
                await restarted.wait(gone["runId"])
        return [kept_value, in_process.value.message, after_restart.value.message]

    assert run(main()) == ["kept", UNAVAILABLE, UNAVAILABLE]


def test_a_parked_cell_over_max_snapshot_bytes_fails_and_is_not_kept(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"

    async def main() -> tuple[dict[str, Any], list[str]]:
        async with durable(db, limits=Limits(timeout_ms=250, max_snapshot_bytes=1024)) as mode:
            envelope = await mode.exec("text('x');\nawait yield_control();\nreturn 1;")
            return envelope, await parked_runs(db)

    envelope, saved = run(main())
    assert failure(envelope) == (
        "snapshot_limit_exceeded",
        "bridge",
        "code mode snapshot limit exceeded",
        True,
    )
    assert envelope["output"] == [{"type": "text", "text": "x"}]
    assert saved == []


def test_an_idle_parked_cell_is_a_small_snapshot(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"

    async def main() -> int:
        async with durable(db) as mode:
            parked = await mode.exec("await yield_control();\nreturn 1;")
            async with SQLiteStore(db) as store:
                saved = await store.load_run(SESSION, parked["runId"])
        assert saved is not None
        return len(saved.blob)

    assert run(main()) <= 64 * 1024


# -- host calls while parked ----------------------------------------------------------------


@pytest.mark.parametrize("durable_store", [False, True], ids=["memory", "sqlite"])
def test_a_tool_that_finishes_while_parked_is_delivered_by_the_next_wait(
    tmp_path: Path, durable_store: bool
) -> None:
    release, finished = asyncio.Event(), asyncio.Event()
    calls: list[int] = []

    async def slow(tool_input: dict[str, Any]) -> Any:
        calls.append(tool_input["n"])
        await release.wait()
        finished.set()
        return tool_input["n"] * 2

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        tools = [Tool(name="slow", execute=slow)]
        if durable_store:
            mode = durable(tmp_path / "s.sqlite", tools)
        else:
            mode = CodeMode(tools, limits=FAST)
        async with mode:
            parked = await mode.exec("return await slow({ n: 21 });")
            release.set()
            await asyncio.wait_for(finished.wait(), 10)  # the call ends while the cell is parked
            return parked, await mode.wait(parked["runId"])

    parked, resumed = run(main())
    assert parked["status"] == "waiting"
    assert (resumed["status"], resumed["value"]) == ("completed", 42)
    assert calls == [21]


def test_a_result_that_settles_after_a_durable_park_is_delivered_by_another_worker(
    tmp_path: Path,
) -> None:
    release = asyncio.Event()
    calls: list[str] = []

    async def charge(_: dict[str, Any]) -> Any:
        calls.append("charge")
        await release.wait()
        return "charged"

    async def written_back(store: SQLiteStore, run_id: str) -> dict[str, Any]:
        while True:
            parked = await store.load_run(SESSION, run_id)
            assert parked is not None
            if "settled" in parked.meta:
                return parked.meta["settled"]
            await store.wait_for_change(SESSION, run_id, timeout=30, since=parked.revision)

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        db = tmp_path / "s.sqlite"
        async with durable(db, [Tool(name="charge", execute=charge)]) as parker:
            parked = await parker.exec("return await charge({});")
            release.set()
            async with SQLiteStore(db) as store:
                settled = await asyncio.wait_for(written_back(store, parked["runId"]), 60)
            async with durable(db) as other:  # another worker, without the tool
                return settled, await other.wait(parked["runId"])

    settled, resumed = run(main())
    assert [reply["ok"] for reply in settled.values()] == [True]
    assert (resumed["status"], resumed["value"]) == ("completed", "charged")
    assert calls == ["charge"]  # delivered from the written-back result, not run again
