"""Decisions are accepted once, in time, and only for their own session: concurrent
decisions (tasks and processes), decisions after the TTL or the run's expiry, and session ids
that would name another session's ledger."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, ConfigurationError, InputError, Limits, Tool
from clawcell.approvals import DecisionLedger
from clawcell.store import MemoryStore, SQLiteStore, state_keys_for
from tests.conftest import run

LIMITS = Limits(timeout_ms=60_000)
ROOT = Path(__file__).resolve().parents[2]
PAY = "try { return await pay({ amount: 5 }); } catch (e) { return { code: e.code }; }"


def _pay(paid: list[int]) -> Tool:
    def pay(params: dict[str, Any]) -> dict[str, Any]:
        paid.append(params["amount"])
        return {"paid": params["amount"]}

    return Tool(name="pay", execute=pay, approval="always")


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_of_a_deny_and_an_approve_racing_exactly_one_is_accepted(
    backend: str, tmp_path: Path
) -> None:
    paid: list[int] = []

    async def body() -> tuple[list[Any], dict[str, Any]]:
        store = MemoryStore() if backend == "memory" else SQLiteStore(tmp_path / "s.db")
        async with store, CodeMode([_pay(paid)], store=store, limits=LIMITS) as mode:
            parked = await mode.exec(PAY)
            run_id, approval = parked["runId"], parked["pendingApprovals"][0]["id"]
            outcomes = await asyncio.gather(
                mode.decide(run_id, approval, "deny", by="a"),
                mode.decide(run_id, approval, "approve", by="b"),
                return_exceptions=True,
            )
            return list(outcomes), await mode.wait(run_id)

    outcomes, done = run(body())
    refused = [o for o in outcomes if isinstance(o, InputError)]
    accepted = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(refused) == 1 and len(accepted) == 1
    assert refused[0].message.endswith("was already decided.")
    assert done["status"] == "completed"
    assert paid == ([5] if accepted[0].decision == "approve" else [])


def test_racing_processes_on_one_sqlite_file_accept_one_decision_per_approval(
    tmp_path: Path,
) -> None:
    path, count = tmp_path / "race.db", 12
    racers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.approvals._racer", str(path), decision, str(count)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for decision in ("approve", "deny", "approve", "deny")
    ]
    for racer in racers:
        assert racer.stdout is not None and racer.stdout.readline().strip() == "ready"
    for racer in racers:
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    won = [json.loads(racer.communicate(timeout=120)[0]) for racer in racers]
    winners = sorted(approval for ids in won for approval in ids)
    assert winners == sorted(f"ap_{i}" for i in range(count))

    async def kept() -> list[str]:
        async with SQLiteStore(path) as store:
            ledger = DecisionLedger(store, "race", state_keys_for(store, durable=True))
            return [
                (await ledger.decision(f"ap_{i}")).by  # type: ignore[union-attr]
                for i in range(count)
            ]

    by_winner = {
        a: ("approve", "deny", "approve", "deny")[i] for i, ids in enumerate(won) for a in ids
    }
    assert run(kept()) == [by_winner[f"ap_{i}"] for i in range(count)]


@pytest.mark.parametrize("session_id", ["victim\x1fapprovals", "a\x1f", "tab\there", "nul\x00"])
def test_a_session_id_with_control_characters_is_refused(session_id: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        CodeMode(session_id=session_id)
    assert refused.value.message == (
        f"`session_id` {session_id!r} contains the control character "
        f"{next(c for c in session_id if c < ' ')!r}; use printable characters only (ids such "
        "as `user-42` or a UUID)."
    )

    async def clean() -> Any:
        async with CodeMode(session_id="victim") as mode:
            return (await mode.exec("return 1"))["value"]

    assert run(clean()) == 1
