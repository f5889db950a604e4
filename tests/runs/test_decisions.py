"""Decisions on pending approvals (`_runs/_decisions.py`): what a run waits for is found on
its live gate or in its durable record, and a decision is refused with a message that says why
when the approval is unknown, decided, expired, or its run has expired. The gate's side
(delivering a decision into the cell) is in `tests/approvals/`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, InputError, Limits, Tool
from clawcell.store import SQLiteStore
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
PAY = "try { return await pay({ amount: 5 }); } catch (e) { return { code: e.code }; }"


class Ledger:
    """A `pay` tool that needs approval and counts its runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def tool(self, name: str = "pay", approval: Any = "always") -> Tool:
        def execute(params: dict[str, Any]) -> dict[str, Any]:
            self.runs.append(name)
            return {"tool": name, **params}

        return Tool(name=name, execute=execute, approval=approval)


def test_deciding_an_unknown_or_decided_approval_is_an_input_error() -> None:
    ledger = Ledger()

    async def body() -> list[str]:
        messages: list[str] = []
        async with CodeMode([ledger.tool("pay", "always")], limits=LIMITS) as mode:
            parked = await mode.exec("return await pay()")
            approval_id = parked["pendingApprovals"][0]["id"]
            for attempt in [("ap_nope", "approve"), (approval_id, "maybe")]:
                with pytest.raises(InputError) as caught:
                    await mode.decide(parked["runId"], *attempt)  # pyright: ignore[reportArgumentType]
                messages.append(caught.value.message)
            await mode.decide(parked["runId"], approval_id, "approve")
            with pytest.raises(InputError) as caught:
                await mode.decide(parked["runId"], approval_id, "deny")
            messages.append(caught.value.message)
        return messages

    run_id_free = [re.sub(r"'cm_[0-9a-f-]+'", "'cm_…'", m) for m in run(body())]
    assert run_id_free[0] == (
        "approval 'ap_nope' of run 'cm_…' is not pending; it may have been decided already, "
        "expired, or belong to another run."
    )
    assert run_id_free[1] == "`decision` must be 'approve' or 'deny', got 'maybe'."
    assert run_id_free[2].endswith("was already decided.")


def test_a_decision_from_another_runtime_is_seen_by_the_worker(tmp_path: Path) -> None:
    ledger = Ledger()
    path = tmp_path / "state.db"

    async def body() -> dict[str, Any]:
        worker_store, ui_store = SQLiteStore(path), SQLiteStore(path)
        worker = CodeMode(
            [ledger.tool("pay", "always")], limits=LIMITS, store=worker_store, session_id="s"
        )
        ui = CodeMode([ledger.tool("pay", "always")], limits=LIMITS, store=ui_store, session_id="s")
        async with worker_store, ui_store, worker, ui:
            parked = await worker.exec("return await pay({ amount: 3 })")
            [pending] = await ui.pending_approvals(parked["runId"])
            await ui.decide(parked["runId"], pending.id, "approve", by="ui")
            return await worker.wait(parked["runId"])

    done = run(body())
    assert done["value"] == {"tool": "pay", "amount": 3}
    assert ledger.runs == ["pay"]


def test_a_decision_after_the_approval_ttl_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import clawcell.approvals._gate as gate

    now = [1_000_000.0]
    monkeypatch.setattr(gate, "_wall_clock", lambda: now[0])
    ledger = Ledger()

    async def body() -> tuple[str, dict[str, Any]]:
        async with CodeMode([ledger.tool()], limits=LIMITS, approval_ttl_seconds=60) as mode:
            parked = await mode.exec(PAY)
            run_id, approval = parked["runId"], parked["pendingApprovals"][0]["id"]
            now[0] += 61
            with pytest.raises(InputError) as late:
                await mode.decide(run_id, approval, "approve")
            return late.value.message, await mode.wait(run_id)

    message, done = run(body())
    assert (
        message.startswith("approval 'ap_") and "expired (`approval_ttl_seconds` is 60)" in message
    )
    assert done["status"] == "completed" and done["value"]["code"] == "approval_denied"
    assert ledger.runs == []


def test_a_decision_after_the_run_expired_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import clawcell._runs._decisions as decisions

    ledger = Ledger()

    class Later:
        @staticmethod
        def time() -> float:
            import time

            return time.time() + 10_000

    async def body() -> str:
        async with CodeMode(
            [ledger.tool()],
            limits=Limits(timeout_ms=60_000, snapshot_ttl_seconds=60),
            approval_ttl_seconds=100_000,
        ) as mode:
            parked = await mode.exec(PAY)
            run_id, approval = parked["runId"], parked["pendingApprovals"][0]["id"]
            monkeypatch.setattr(decisions, "time", Later)
            with pytest.raises(InputError) as late:
                await mode.decide(run_id, approval, "approve")
            monkeypatch.undo()
            assert len(await mode.approval_audit()) == 0
            return late.value.message

    assert run(body()).endswith("has expired; its approvals can no longer be decided.")
    assert ledger.runs == []
