"""The bridge caps hold whatever a cell does with timers (D2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits, Tool
from tests.conftest import failure, run

OVERFLOW = (
    "code mode bridge queue limit exceeded (128 ordinary requests queued; 16 in-flight "
    "slots). Await smaller batches before creating more tool calls or timers."
)
# Pairs of timers that settle in one batch, where the first clears the second after its
# sleep already settled: each pair used to give back one in-flight slot too many.
CLEAR_SETTLED = """
for (let round = 0; round < {rounds}; round++) {{
  await new Promise((resolve) => {{
    let second;
    setTimeout(() => clearTimeout(second), 0);
    second = setTimeout(resolve, 0);
    setTimeout(resolve, 0);
  }});
}}
"""


def _naps() -> tuple[Tool, list[int]]:
    active = [0, 0]

    async def nap(_: dict[str, Any]) -> Any:
        active[0] += 1
        active[1] = max(active)
        for _step in range(3):
            await asyncio.sleep(0)
        active[0] -= 1
        return None

    return Tool(name="nap", execute=nap), active


def _exec(code: str, tool: Tool) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with CodeMode([tool], limits=Limits(timeout_ms=60_000)) as mode:
            return await mode.exec(code)

    return run(main())


@pytest.mark.parametrize("rounds", [1, 40, 200])
def test_clearing_a_settled_timer_frees_no_in_flight_slot(rounds: int) -> None:
    tool, active = _naps()
    code = CLEAR_SETTLED.format(rounds=rounds) + (
        "await Promise.all(Array.from({ length: 144 }, () => nap({})));\nreturn 'ok';"
    )
    assert _exec(code, tool)["value"] == "ok"
    assert active == [0, 16]


@pytest.mark.parametrize("rounds", [1, 40, 200])
def test_the_145th_outstanding_request_overflows_after_cleared_timers(rounds: int) -> None:
    tool, active = _naps()
    code = CLEAR_SETTLED.format(rounds=rounds) + (
        "await Promise.all(Array.from({ length: 145 }, () => nap({})));\nreturn 'ok';"
    )
    envelope = _exec(code, tool)
    # Timers alone never start the bridge phase (sleep is not a dispatch).
    assert failure(envelope)[:3] == ("invalid_input", "input", OVERFLOW)
    assert active[1] <= 16
