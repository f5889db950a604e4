"""`put_new` and the decision ledger: of concurrent first writes exactly one wins, on every
backend (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio

import pytest

from clawcell.approvals import ApprovalDecision, DecisionLedger
from clawcell.errors import ConfigurationError
from clawcell.store import FirstWriter, StoredValue
from tests.conftest import run

from .conftest import StoreFactory


def _decision(approval_id: str, decision: str) -> ApprovalDecision:
    return ApprovalDecision(
        approval_id=approval_id,
        run_id="cm_1",
        tool="pay",
        decision="approve" if decision == "approve" else "deny",
        by=decision,
        decided_at=1.0,
    )


def test_put_new_writes_only_the_first_value(new_store: StoreFactory) -> None:
    async def body() -> tuple[list[bool], str | None, bool]:
        async with new_store() as store:
            assert isinstance(store, FirstWriter)
            values = [StoredValue(json=str(i)) for i in range(8)]
            won = await asyncio.gather(*(store.put_new("s", "k", v) for v in values))
            kept = await store.get("s", "k")
            other = await store.put_new("s", "other", StoredValue(json="1"))
            return list(won), None if kept is None else kept.json, other

    won, kept, other = run(body())
    assert won.count(True) == 1 and kept == str(won.index(True))
    assert other is True


def test_two_concurrent_decisions_on_one_approval_accept_exactly_one(
    new_store: StoreFactory,
) -> None:
    async def body() -> tuple[list[bool], str | None, int]:
        async with new_store() as store:
            ledgers = [DecisionLedger(store, "session") for _ in range(2)]
            won = await asyncio.gather(
                ledgers[0].record(_decision("ap_1", "deny")),
                ledgers[1].record(_decision("ap_1", "approve")),
            )
            kept = await ledgers[0].decision("ap_1")
            audit = await ledgers[1].audit()
            return list(won), None if kept is None else kept.decision, len(audit)

    won, kept, audited = run(body())
    assert won.count(True) == 1
    assert kept == ("deny" if won[0] else "approve")
    assert audited == 1


@pytest.mark.parametrize("session_id", ["a\x1f", "victim\x1fapprovals", "a\x00", "\x7f", "a\ud800"])
def test_a_session_id_with_control_characters_gets_no_ledger(
    new_store: StoreFactory, session_id: str
) -> None:
    async def body() -> None:
        async with new_store() as store:
            with pytest.raises(ConfigurationError) as refused:
                DecisionLedger(store, session_id)
            assert "control character" in refused.value.message
            clean = DecisionLedger(store, "victim")
            assert await clean.record(_decision("ap_2", "approve")) is True

    run(body())
