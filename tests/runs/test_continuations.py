"""Continuations through `CodeMode`: durable parking in SQLite, capacity, TTL expiry, snapshot
limits, host calls that keep running while a cell is parked, and output delivered incrementally
across restarts. Replay after SIGKILL is in `test_replay.py`; leases and racing workers in
`test_durable.py`."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clawcell import CodeMode, InputError, Limits, Tool
from clawcell.store import SQLiteStore
from tests.conftest import FAST, failure, run
from tests.runs._durable_modes import SESSION, UNAVAILABLE, durable, parked_runs


def fake_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Patch `time` in the modules that keep parked runs; returns the mutable "now".

    It starts an hour ahead of the wall clock, so the store (which checks expiry and leases on
    the real clock) never finds a run expired however slowly the test runs: expiry is the
    lifecycle's decision on this clock.
    """
    now = [time.time() + 3600]
    clock = {name: getattr(time, name) for name in dir(time) if not name.startswith("_")}
    clock["monotonic"] = clock["time"] = lambda: now[0]
    for name in ("clawcell._runs._lifecycle", "clawcell._runs._parked", "clawcell._runs._revive"):
        module = sys.modules[name]
        monkeypatch.setattr(module, "time", SimpleNamespace(**clock))
    return now


# -- after a restart ----------------------------------------------------------------------


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


# -- capacity, expiry, size --------------------------------------------------------


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
