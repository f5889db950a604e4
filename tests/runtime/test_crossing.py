"""A guest turn split at its crossing (`runtime/_crossing.py`): a settle batch larger than the
staging buffer is staged in a buffer of its own and freed after the turn; a crossing whose
guest code overruns the deadline ends as a timeout, and the next cell runs normally."""

from __future__ import annotations

import time
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime._wasm._instance import Instance  # pyright: ignore[reportPrivateUsage]
from tests.conftest import run

BIG = "x" * 200_000  # the reply batch is larger than the 64 KiB staging buffer


async def _big(_: dict[str, Any]) -> Any:
    return BIG


def test_a_batch_larger_than_the_staging_buffer_is_freed_after_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    staged: list[int] = []
    freed: list[int] = []
    stage, free = Instance.stage, Instance.free

    def spy_stage(self: Instance, text: str | None) -> tuple[int, int, int]:
        placed = stage(self, text)
        if placed[2]:
            staged.append(placed[2])
        return placed

    def spy_free(self: Instance, ptr: int) -> None:
        freed.append(ptr)
        free(self, ptr)

    monkeypatch.setattr(Instance, "stage", spy_stage)
    monkeypatch.setattr(Instance, "free", spy_free)

    async def main() -> list[Any]:
        tools = [Tool(name="big", execute=_big, parameters={"type": "object"})]
        values: list[Any] = []
        for guest_thread in (True, False):
            async with CodeMode(tools, guest_thread=guest_thread) as mode:
                envelope = await mode.exec("return (await big({})).length;")
                values.append(envelope["value"])
        return values

    assert run(main()) == [len(BIG), len(BIG)]
    assert len(staged) == 2 and set(staged) <= set(freed)


def test_a_crossing_that_overruns_its_deadline_times_out_and_the_next_cell_runs() -> None:
    async def main() -> tuple[dict[str, Any], float, Any]:
        tools = [Tool(name="big", execute=_big, parameters={"type": "object"})]
        async with CodeMode(tools, limits=Limits(timeout_ms=300)) as mode:
            started = time.monotonic()
            envelope = await mode.exec("await big({});\nwhile (true) {}")
            took = time.monotonic() - started
            after = await mode.exec("return 1")
        return envelope, took, after["value"]

    envelope, took, after = run(main())
    assert (envelope["status"], envelope["code"], after) == ("failed", "timeout", 1)
    assert took < 30  # a hang guard, not a timing check: the leg's budget is 0.3 s
