"""Cells move between worker processes that share one store, while workers are SIGKILLed.

A short version of the load in `bench/bench_scale_out.py` (see `tests/store/_load.py` for
what is driven and what `check_load` proves): 40 cells, 3 workers, every `exec` and `wait`
sent to a random worker, and the workers that get the 10th and the 30th `wait` SIGKILLed
right after and restarted. Timeouts here are only hang guards.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.conftest import run

from ._load import LoadPlan, LoadResult, run_load
from ._load_checks import check_load

# A leg's budget of 1.5 s, not the plan's default 1 s: at load 17 (the suite beside other
# work) a quick read's leg once ran past 1 s and failed with `timeout`, as a leg does.
PLAN = LoadPlan(
    cells=40,
    workers=3,
    concurrency=12,
    sessions=5,
    kill_after_waits=frozenset({10, 30}),
    timeout_ms=1500,
)


def test_cells_complete_once_each_across_killed_and_restarted_workers(
    shared_database: tuple[str, str], tmp_path: Path
) -> None:
    target, schema = shared_database

    async def main() -> LoadResult:
        with anyio.fail_after(600):  # a hang guard only
            return await run_load(PLAN, target, schema, tmp_path / "ledger.db")

    result = run(main())
    assert check_load(result) == []
    assert len(result.kills) == 2
