"""One cell's life (`_cell/_cell.py`), seen through `CodeMode`: it completes once its value is
ready and nothing is outstanding, fails when nothing can settle its promise or a rejection goes
unhandled, and parks when it yields or its leg's budget runs out with calls still running."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell import CodeMode, Tool
from clawcell._cell._cell import STUCK_MESSAGE
from tests.conftest import FAST, ROOMY, exec_one, failure, run


def test_a_promise_nothing_can_settle_is_a_stuck_cell() -> None:
    envelope = exec_one("await new Promise(() => {}); return 1;")
    assert failure(envelope) == ("internal_error", "guest", STUCK_MESSAGE, False)


def test_a_failure_after_host_work_started_is_in_the_bridge_phase() -> None:
    envelope = exec_one("await echo({}); await new Promise(() => {});")
    assert failure(envelope) == ("internal_error", "bridge", STUCK_MESSAGE, True)


def test_a_rejection_nobody_handled_fails_a_cell_whose_value_is_ready() -> None:
    envelope = exec_one('Promise.reject(new TypeError("nobody")); return 2;')
    assert failure(envelope)[:2] == ("internal_error", "guest")
    assert envelope["error"].startswith("TypeError: nobody\n")


def test_a_call_left_running_when_the_value_is_ready_finishes_before_the_cell_completes() -> None:
    finished: list[str] = []

    async def record(_: dict[str, Any]) -> Any:
        await asyncio.sleep(0)
        finished.append("record")
        return None

    async def main() -> dict[str, Any]:
        async with CodeMode([Tool(name="record", execute=record)], limits=ROOMY) as mode:
            return await mode.exec("record({}); return 'value first';")

    envelope = run(main())
    assert (envelope["status"], envelope["value"]) == ("completed", "value first")
    assert finished == ["record"]


def test_a_yield_parks_the_cell_at_once_with_its_reason() -> None:
    envelope = exec_one('await yield_control("why"); return 1;')
    assert (envelope["status"], envelope["reason"]) == ("waiting", "yield")
    assert [call["method"] for call in envelope["pendingToolCalls"]] == ["yield"]


def test_a_leg_whose_budget_runs_out_with_calls_running_parks_and_the_next_wait_finishes() -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        gate = asyncio.Event()

        async def slow(_: dict[str, Any]) -> Any:
            await gate.wait()
            return "slow answer"

        async with CodeMode([Tool(name="slow", execute=slow)], limits=FAST) as mode:
            parked = await mode.exec("return await slow({});")
            gate.set()
            return parked, await mode.wait(parked["runId"])

    parked, resumed = run(main())
    assert (parked["status"], parked["reason"]) == ("waiting", "pending_tools")
    assert [call["method"] for call in parked["pendingToolCalls"]] == ["callValue"]
    assert (resumed["status"], resumed["value"]) == ("completed", "slow answer")
