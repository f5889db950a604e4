"""The session turn lease (`store.SessionTurns`) across store objects on SQLite and PostgreSQL.

Run: `.venv/bin/python bench/bench_turn_lease.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN` when
set, or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL). Prints
a table and writes `bench/results/turn_lease.json` and `.md`. A script, not a test.

Two store objects on one database stand for two workers (each has its own connections and,
on PostgreSQL, its own `LISTEN` connection). Rounds alternate between the backends, so load
from the other agents on the machine falls on both alike; p50 and p99 over the rounds:

* hold + release: one worker takes a session's turn lease and gives it back (the cost each
  turn adds);
* Stop delivery: worker B records a Stop for the turn worker A holds; the time from the start
  of `stop()` to A's `stop_requested` event (SQLite polls, PostgreSQL is `NOTIFY`d);
* handover: A releases while B waits in `hold(wait=…)`; the time from the start of the
  release to B holding;
* takeover: A's renewals stop (a dead worker) with a 1 s lease; the time from its last
  renewal to B holding (the lease length plus the wait's wake-up).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from _common import machine_meta, write_results
from _postgres import StoreMakers, backends_table, latency_stats, on_both_backends
from _postgres import postgres_dsn_or_rerun as _dsn
from clawcell.store import SessionTurns

ROUNDS = 60
TAKEOVERS = 5


async def _round(a: SessionTurns, b: SessionTurns, session: str) -> dict[str, float]:
    start = time.perf_counter()
    hold = await a.hold(session, wait=10)
    assert hold is not None
    await hold.release()
    cycle = time.perf_counter() - start

    hold = await a.hold(session, wait=10)
    assert hold is not None
    start = time.perf_counter()
    assert await b.stop(session)
    await asyncio.wait_for(hold.stop_requested.wait(), 30)
    stop = time.perf_counter() - start

    waiting = asyncio.create_task(b.hold(session, wait=30))
    await asyncio.sleep(0.05)  # B is waiting on the row by now
    start = time.perf_counter()
    await hold.release()
    taken = await waiting
    handover = time.perf_counter() - start
    assert taken is not None
    await taken.release()
    return {"cycle": cycle, "stop": stop, "handover": handover}


async def _takeover(a: SessionTurns, b: SessionTurns, session: str) -> float:
    hold = await a.hold(session, wait=10)
    assert hold is not None
    await hold._keeper.close()  # pyright: ignore[reportPrivateUsage]  # "dies": no renewals
    start = time.perf_counter()
    taken = await b.hold(session, wait=30)
    elapsed = time.perf_counter() - start
    assert taken is not None and taken.took_over_from == a.owner
    await taken.release()
    return elapsed


async def _bench(makers: StoreMakers) -> dict[str, Any]:
    stores = {name: (make(), make()) for name, make in makers.items()}
    samples: dict[str, dict[str, list[float]]] = {
        name: {"cycle": [], "stop": [], "handover": [], "takeover": []} for name in makers
    }
    try:
        for i in range(ROUNDS):
            for name, (one, two) in stores.items():  # alternate the backends every round
                a, b = SessionTurns(one, lease_seconds=30), SessionTurns(two, lease_seconds=30)
                for key, value in (await _round(a, b, f"s{i}")).items():
                    samples[name][key].append(value)
        for i in range(TAKEOVERS):
            for name, (one, two) in stores.items():
                a, b = SessionTurns(one, lease_seconds=1), SessionTurns(two, lease_seconds=30)
                samples[name]["takeover"].append(await _takeover(a, b, f"t{i}"))
    finally:
        for one, two in stores.values():
            await one.close()
            await two.close()
    return {
        name: {k: latency_stats(v) for k, v in kinds.items()} for name, kinds in samples.items()
    }


def _table(results: dict[str, Any]) -> str:
    return backends_table(results, [
        ("hold + release (one turn's cost)", "cycle"),
        ("Stop delivered to the holder", "stop"),
        ("handover to a waiting worker", "handover"),
        ("takeover after a death (1 s lease)", "takeover"),
    ])  # fmt: skip


def main() -> int:
    results = on_both_backends(_dsn(__file__), _bench)
    meta = machine_meta(rounds=ROUNDS, takeovers=TAKEOVERS)
    print(f"load average {meta['load_average_1m']}, {meta['cpus']} cores")
    table = _table(results)
    write_results("turn_lease", {**meta, **results}, table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
