"""Leases on durable parked runs (`_runs/_durable.py`): one worker continues a run however many
race for it, and a reply that settles after the park is written back for whichever worker
continues the run. A second `wait` in one process is in `test_lifecycle.py`; the store's side
of leases in `tests/store/test_leases.py`."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from clawcell import Tool
from clawcell._runs._durable import stale_message
from clawcell.store import SQLiteStore
from tests.conftest import run
from tests.runs._durable_modes import (
    SESSION,
    UNAVAILABLE,
    durable,
    parked_runs,
    read_json_line,
    worker,
)


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


@pytest.mark.parametrize(
    "code",
    [
        "return await charge({});",  # the leg's budget runs out while the call runs
        # the leg parks on the yield in the very step that started the call
        "const charged = charge({});\nawait yield_control('meanwhile');\nreturn await charged;",
    ],
    ids=["budget", "yield"],
)
def test_a_result_that_settles_after_a_durable_park_is_delivered_by_another_worker(
    tmp_path: Path, code: str
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
            parked = await parker.exec(code)
            release.set()
            async with SQLiteStore(db) as store:
                settled = await asyncio.wait_for(written_back(store, parked["runId"]), 60)
            async with durable(db) as other:  # another worker, without the tool
                return settled, await other.wait(parked["runId"])

    settled, resumed = run(main())
    assert [reply["ok"] for reply in settled.values()] == [True]
    assert (resumed["status"], resumed["value"]) == ("completed", "charged")
    assert calls == ["charge"]  # delivered from the written-back result, not run again


def test_a_leg_whose_run_was_claimed_meanwhile_says_its_result_was_discarded() -> None:
    # The message of the `stale_run` failure (a lease that lapsed mid-leg): what happened, the
    # run with `!r`, and what to do next.
    assert stale_message("run-7") == (
        "code mode run 'run-7' was claimed by another worker while this leg ran (its lease "
        "lapsed); this leg's result was discarded and nothing was committed. Call `wait` "
        "again for the run's current state."
    )
