"""A process racing others to decide the same approvals: `python -m tests.approvals._racer DB
DECISION COUNT`. Prints `ready`, waits for a line on stdin (the start signal, so every racer
starts together), records DECISION on `ap_0` … `ap_<COUNT-1>` and prints the JSON list of the
ids it won."""

from __future__ import annotations

import asyncio
import json
import sys

from clawcell.approvals import ApprovalDecision, DecisionLedger
from clawcell.store import SQLiteStore, state_keys_for


async def main(path: str, decision: str, count: int) -> None:
    async with SQLiteStore(path) as store:
        ledger = DecisionLedger(store, "race", state_keys_for(store, durable=True))
        await store.upgrade()
        print("ready", flush=True)
        sys.stdin.readline()
        won: list[str] = []
        for index in range(count):
            approval_id = f"ap_{index}"
            record = ApprovalDecision(
                approval_id=approval_id,
                run_id="cm_race",
                tool="pay",
                decision="approve" if decision == "approve" else "deny",
                by=decision,
                decided_at=float(index),
            )
            if await ledger.record(record):
                won.append(approval_id)
        print(json.dumps(won), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
