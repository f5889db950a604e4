"""The bridge queue: how many requests run at once, how many may wait, and the failure when
a cell queues more."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell import Limits, Tool
from tests.conftest import exec_one, failure, value_of

OVERFLOW = (
    "code mode bridge queue limit exceeded (128 ordinary requests queued; {n} in-flight "
    "slots). Await smaller batches before creating more tool calls or timers."
)


def test_at_most_max_pending_tool_calls_run_at_once() -> None:
    active = [0, 0]

    async def busy(tool_input: dict[str, Any]) -> Any:
        active[0] += 1
        active[1] = max(active)
        for _ in range(3):
            await asyncio.sleep(0)
        active[0] -= 1
        return tool_input["i"]

    code = "return await Promise.all(Array.from({ length: 20 }, (_, i) => busy({ i })));"
    limits = Limits(timeout_ms=2000, max_pending_tool_calls=3)
    assert value_of(code, tools=[Tool(name="busy", execute=busy)], limits=limits) == list(range(20))
    assert active == [0, 3]


def test_a_full_bridge_queue_fails_the_cell_with_the_overflow_message() -> None:
    code = (
        "const ps = [];\ntry { for (let i = 0; i < 200; i++) ps.push(echo({ i })); }\n"
        "catch (e) { text('caught'); }\ntry { echo({}); } catch (e) { text('sticky'); }\n"
        "return ps.length;"
    )
    envelope = exec_one(code, limits=Limits(timeout_ms=60_000, max_pending_tool_calls=4))
    assert envelope["output"] == [
        {"type": "text", "text": "caught"},
        {"type": "text", "text": "sticky"},
    ]
    assert failure(envelope)[0] == "invalid_input"
    assert failure(envelope)[2] == OVERFLOW.format(n=4)


def test_timers_count_against_the_bridge_queue() -> None:
    code = "for (let i = 0; i < 200; i++) setTimeout(() => {}, 1);"
    envelope = exec_one(code)
    assert failure(envelope) == ("invalid_input", "input", OVERFLOW.format(n=16), False)


def test_a_queue_overflow_after_dispatch_is_a_bridge_phase_failure() -> None:
    code = "await echo({});\nfor (let i = 0; i < 200; i++) echo({ i });"
    assert failure(exec_one(code)) == ("invalid_input", "bridge", OVERFLOW.format(n=16), True)


def test_a_queue_overflow_in_the_first_frontier_is_an_input_failure() -> None:
    # The recorded release (queue/overflow-129, release-differences §2 item 10) reports the
    # input phase and no dispatch: the overflowing frontier never reaches the host.
    code = "for (let i = 0; i < 200; i++) echo({ i });"
    assert failure(exec_one(code)) == ("invalid_input", "input", OVERFLOW.format(n=16), False)
