"""Runs revived from a durable store (`_runs/_revive.py`), and the error a `wait` raises when
no guest can continue its run: it names the run, says it was ended and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clawcell import InputError, RuntimeUnavailableError, SnapshotError
from clawcell._runs._revive import ended  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime import GuestConfig, QuickJSExecutor
from tests.conftest import run
from tests.runs._durable_modes import UNAVAILABLE, durable, parked_runs

_PARK = "await yield_control();\nreturn 'revived';"


@pytest.mark.parametrize("kind", [SnapshotError, RuntimeUnavailableError])
def test_ended_keeps_the_cause_first_and_says_what_to_do(
    kind: type[SnapshotError | RuntimeUnavailableError],
) -> None:
    error = ended("cm_1", kind("snapshot is corrupt: bad pages."))
    assert type(error) is kind and error.code == kind.code
    assert error.message == (
        "snapshot is corrupt: bad pages; code mode run cm_1 cannot be continued and was "
        "ended: run its cell again with exec."
    )


def test_a_committed_run_is_revived_by_another_runtime(tmp_path: Path) -> None:
    async def main() -> Any:
        async with durable(tmp_path / "runs.db") as first:
            parked = await first.exec(_PARK)
        async with durable(tmp_path / "runs.db") as second:
            return (await second.wait(parked["runId"]))["value"]

    assert run(main()) == "revived"


def test_a_run_no_guest_can_be_had_for_is_ended_and_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"

    def unavailable(_: QuickJSExecutor, __: GuestConfig) -> Any:
        raise RuntimeUnavailableError("no guest can be built here.")

    async def main() -> tuple[str, str, str, list[str]]:
        async with durable(db) as first:
            run_id = (await first.exec(_PARK))["runId"]
        async with durable(db) as second:
            with monkeypatch.context() as patched:
                patched.setattr(QuickJSExecutor, "acquire", unavailable)
                with pytest.raises(RuntimeUnavailableError) as refused:
                    await second.wait(run_id)
            with pytest.raises(InputError) as gone:
                await second.wait(run_id)
        return run_id, refused.value.message, gone.value.message, await parked_runs(db)

    run_id, refused, gone, left = run(main())
    assert refused == (
        f"no guest can be built here; code mode run {run_id} cannot be continued and was "
        "ended: run its cell again with exec."
    )
    assert gone == UNAVAILABLE
    assert left == []
