"""Turns relayed through the store (`ui.StoreTurns`) on SQLite and PostgreSQL.

Run: `.venv/bin/python bench/bench_live_turns.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN` when
set, or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL). Prints
a table and writes `bench/results/live_turns.json` and `.md`. A script, not a test.

Two store objects on one database stand for two workers A and B (each its own connections
and, on PostgreSQL, its own `LISTEN` connection), in one process so one clock times both.
Rounds alternate between the backends, so the load of other agents on the machine falls on
both alike; p50 and p99 over all samples:

* relay: A's turn emits messages at random gaps of 0–200 ms (a model streaming, with pauses);
  a follower on B receives each; the time from A's `yield` to B's receipt. It includes the
  write bound: the first message after a quiet spell is written at once, one arriving within
  `FLUSH_SECONDS` (0.1 s) of the last write waits for the next write.
* takeover: A runs a turn and "dies" at a random moment of its heartbeat cycle (its
  heartbeat and writes stop; its turn hangs); the time from the death to B's follower
  receiving the turn's end (`interrupted`), with B's background sweep the only thing that
  notices (no request). Leases of 3 s here (30 s by default: takeover scales with it).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from _common import machine_meta, write_results
from _postgres import StoreMakers, backends_table, latency_stats, on_both_backends
from _postgres import postgres_dsn_or_rerun as _dsn
from clawcell.store import SessionStore
from clawcell.ui._chat._store_turns import StoreTurns
from clawcell.ui._chat._turns import LiveTurn

ROUNDS = 6
MESSAGES = 50
TAKEOVERS = 5
LEASE = 3.0


async def _relay(a: StoreTurns, b: StoreTurns, session: str) -> list[float]:
    sent: dict[str, float] = {}

    async def produce(turn: LiveTurn) -> AsyncIterator[str]:
        turn.history_index = 0
        turn.indexed.set()
        for i in range(MESSAGES):
            await asyncio.sleep(random.uniform(0, 0.2))
            message = f"event: m\ndata: {i}\n\n"
            sent[message] = time.perf_counter()
            yield message

    turn = await a.start(session, produce)
    assert turn is not None
    latencies: list[float] = []
    async for kind, data in b.follow(session, turn.turn_id, 0):
        if kind == "message":
            latencies.append(time.perf_counter() - sent[data["sse"]])
        if kind == "turn_end":
            break
    return latencies


async def _takeover(make: Callable[[], SessionStore], session: str) -> float:
    stores = make(), make()
    a = StoreTurns(stores[0], lambda s, t: None, lease_seconds=LEASE)
    b = StoreTurns(stores[1], lambda s, t: None, lease_seconds=LEASE)
    hang = asyncio.Event()

    async def produce(turn: LiveTurn) -> AsyncIterator[str]:
        turn.history_index = 0
        turn.indexed.set()
        yield "event: m\ndata: {}\n\n"
        await hang.wait()

    try:
        await b.sweep()
        b.tend()  # B's sweeper, as its app's lifespan starts it
        turn = await a.start(session, produce)
        assert turn is not None
        await asyncio.sleep(random.uniform(0, LEASE / 3))  # a random moment of the cycle
        sweeper = a._sweeper  # pyright: ignore[reportPrivateUsage]
        assert sweeper is not None
        sweeper.cancel()  # A "dies": no more heartbeats
        died = time.perf_counter()
        async for kind, data in b.follow(session, turn.turn_id, 0):
            if kind == "turn_end":
                assert data["state"] == "interrupted", data
                return time.perf_counter() - died
        raise AssertionError("the follow ended without the turn's end")
    finally:
        hang.set()
        await b.close()
        await a.close()
        for store in stores:
            await store.close()


async def _bench(makers: StoreMakers) -> dict[str, Any]:
    samples: dict[str, dict[str, list[float]]] = {name: {"relay": [], "takeover": []}
                                                  for name in makers}  # fmt: skip
    for i in range(ROUNDS):
        for name, make in makers.items():  # alternate the backends every round
            one, two = make(), make()
            a = StoreTurns(one, lambda s, t: None)
            b = StoreTurns(two, lambda s, t: None)
            try:
                samples[name]["relay"] += await _relay(a, b, f"r{i}")
            finally:
                await a.close()
                await b.close()
                await one.close()
                await two.close()
    for i in range(TAKEOVERS):
        for name, make in makers.items():
            samples[name]["takeover"].append(await _takeover(make, f"t{i}"))
    return {
        name: {k: latency_stats(v) for k, v in kinds.items()} for name, kinds in samples.items()
    }


def _table(results: dict[str, Any]) -> str:
    return backends_table(results, [
        ("event relayed to a follower on another worker", "relay"),
        (f"takeover after a death, by the sweep ({LEASE:g} s lease)", "takeover"),
    ])  # fmt: skip


def main() -> int:
    results = on_both_backends(_dsn(__file__), _bench)
    meta = machine_meta(rounds=ROUNDS, messages=MESSAGES, takeovers=TAKEOVERS, lease=LEASE)
    print(f"load average {meta['load_average_1m']}, {meta['cpus']} cores")
    table = _table(results)
    write_results("live_turns", {**meta, **results}, table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
