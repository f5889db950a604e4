"""A fleet of `clawcell serve` workers on one PostgreSQL (issue 37): throughput of short
turns with 1 and 3 workers, and what delivering Stop and approvals across workers adds.

Run: `.venv/bin/python bench/bench_fleet.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN` when set,
or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL). Prints a
table and writes `bench/results/fleet.json` and `.md`. A script, not a test.

The fleet is the tests' (`tests/ui/_fleet.py`): three worker processes on one new database,
one scripted OpenAI-compatible model server (it answers at once, so a turn's time is
clawcell's), round-robin proxies in the same process as the client. Rounds alternate:

* turns: 30 turns started at once, each in its own session (one model call, no cell), through
  a proxy over one worker and through one over all three; turns/s over the batch, p50/p99 of
  each turn's time from the request to the end of its stream;
* Stop: a turn holds in a cell on worker A; Stop is sent to A itself or to worker B; the time
  from sending it to A's stream saying `turn_stopped`;
* approval: a turn on worker A ends waiting for an approval; the decision is sent to A or to
  B; the time from sending it to the continued turn's first event and to its end.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import httpx

from _common import machine_meta, write_results
from _postgres import postgres_dsn_or_rerun
from clawcell.ui._security import Secrets

ROOT = Path(__file__).resolve().parents[1]
TURNS = 30
THROUGHPUT_ROUNDS = 6
DELIVERY_ROUNDS = 20
HUNG_S = 60.0
"""A turn's stream silent this long counts as hung (the UI sends a keepalive every 15 s)."""
HEADERS: dict[str, str] = {}
"""The fleet's token and CSRF headers (set by `main`, which imports the fleet)."""


def _client(base: str) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=100)
    timeout = httpx.Timeout(120, read=HUNG_S)
    return httpx.AsyncClient(base_url=base, headers=HEADERS, timeout=timeout, limits=limits)


async def _lines(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    name = ""
    async for line in response.aiter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield name, line.removeprefix("data: ")


async def _short_turn(client: httpx.AsyncClient, session: str) -> float | None:
    """The turn's time, or `None` when its stream went silent for `HUNG_S` (counted)."""
    start = time.perf_counter()
    try:
        async with client.stream(
            "POST", f"/api/sessions/{session}/turns", json={"text": "hi"}
        ) as r:
            assert r.status_code == 200
            async for _ in _lines(r):
                pass
    except httpx.ReadTimeout:
        return None
    return time.perf_counter() - start


async def _batch(base: str, tag: str) -> tuple[float, list[float], int]:
    """Turns per second over the batch, each finished turn's time, and the hung ones."""
    async with _client(base) as client:
        start = time.perf_counter()
        times = await asyncio.gather(*(_short_turn(client, f"{tag}-{n}") for n in range(TURNS)))
        done = [t for t in times if t is not None]
        return TURNS / (time.perf_counter() - start), done, TURNS - len(done)


async def _stop(a: str, to: str, session: str) -> float:
    async with _client(a) as owner, _client(to) as sender:
        body = {"text": "hold on"}
        async with owner.stream("POST", f"/api/sessions/{session}/turns", json=body) as r:
            events = _lines(r)
            async for name, _ in events:
                if name == "cell_output":
                    break
            start = time.perf_counter()
            assert (await sender.post(f"/api/sessions/{session}/stop")).status_code == 200
            async for name, _ in events:
                if name == "turn_stopped":
                    return time.perf_counter() - start
    raise AssertionError("the turn never stopped")


async def _approval(a: str, to: str, session: str) -> tuple[float, float]:
    async with _client(a) as asker, _client(to) as decider:
        pending: dict[str, Any] = {}
        body = {"text": "deploy bench"}
        async with asker.stream("POST", f"/api/sessions/{session}/turns", json=body) as r:
            async for _, data in _lines(r):
                if '"pendingApprovals"' in data:
                    pending = _find_pending(json.loads(data)) or pending
        path = f"/api/sessions/{session}/runs/{pending['runId']}/approvals/{pending['id']}"
        start = time.perf_counter()
        first = 0.0
        async with decider.stream("POST", path, json={"decision": "approve"}) as r:
            assert r.status_code == 200
            async for _ in _lines(r):
                first = first or time.perf_counter() - start
        return first, time.perf_counter() - start


def _find_pending(value: Any) -> dict[str, Any] | None:
    """The run id and approval id of the first `pendingApprovals` in a JSON value."""
    if isinstance(value, dict):
        data = cast(dict[str, Any], value)
        prompts = data.get("pendingApprovals")
        if isinstance(prompts, list) and prompts:
            return {"runId": data["runId"], "id": cast(list[Any], prompts)[0]["id"]}
        items: list[Any] = list(data.values())
    elif isinstance(value, list):
        items = cast(list[Any], value)
    else:
        return None
    for item in items:
        if (found := _find_pending(item)) is not None:
            return found
    return None


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)


async def _bench(workers: list[str], three: str, one: str) -> dict[str, Any]:
    a, b = workers[0], workers[1]
    rates: dict[str, list[float]] = {"1 worker": [], "3 workers": []}
    times: dict[str, list[float]] = {"1 worker": [], "3 workers": []}
    stuck = {"1 worker": 0, "3 workers": 0}
    for n in range(THROUGHPUT_ROUNDS):
        order = [("1 worker", one), ("3 workers", three)]
        for name, base in order if n % 2 == 0 else order[::-1]:
            rate, each, hung = await _batch(base, f"t{n}-{name[0]}-{uuid.uuid4().hex[:6]}")
            rates[name].append(rate)
            times[name] += each
            stuck[name] += hung
            print(f"round {n}: {name}: {rate:.1f} turns/s", flush=True)
    stops: dict[str, list[float]] = {"same worker": [], "other worker": []}
    decided: dict[str, list[float]] = {"same worker": [], "other worker": []}
    ended: dict[str, list[float]] = {"same worker": [], "other worker": []}
    for n in range(DELIVERY_ROUNDS):
        order = [("same worker", a), ("other worker", b)]
        for name, to in order if n % 2 == 0 else order[::-1]:
            stops[name].append(await _stop(a, to, f"s{n}-{name[0]}"))
            first, end = await _approval(a, to, f"a{n}-{name[0]}")
            decided[name].append(first)
            ended[name].append(end)
            print(f"round {n}: {name}: Stop {stops[name][-1] * 1000:.0f} ms, decision "
                  f"{first * 1000:.0f} ms", flush=True)  # fmt: skip
    ratios = [three / one for one, three in zip(rates["1 worker"], rates["3 workers"], strict=True)]
    return {
        "throughput_ratio_3_to_1_median": round(statistics.median(ratios), 2),
        "throughput_ratio_3_to_1_rounds": [round(r, 2) for r in ratios],
        "throughput": {
            k: {
                "turns_per_s_median": round(statistics.median(v), 1),
                "hung": stuck[k],
                "turn_p50_ms": _ms(times[k], 0.5),
                "turn_p99_ms": _ms(times[k], 0.99),
            }
            for k, v in rates.items()
        },
        "stop_ms": {k: {"p50": _ms(v, 0.5), "p99": _ms(v, 0.99)} for k, v in stops.items()},
        "approval_first_event_ms": {
            k: {"p50": _ms(v, 0.5), "p99": _ms(v, 0.99)} for k, v in decided.items()
        },
        "approval_turn_end_ms": {
            k: {"p50": _ms(v, 0.5), "p99": _ms(v, 0.99)} for k, v in ended.items()
        },
    }


def _table(results: dict[str, Any]) -> str:
    lines = ["| workers | turns/s (median) | turn p50 | turn p99 | hung |",
             "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name, row in results["throughput"].items():
        lines.append(f"| {name} | {row['turns_per_s_median']} | {row['turn_p50_ms']} ms "
                     f"| {row['turn_p99_ms']} ms | {row['hung']} |")  # fmt: skip
    lines.append(f"| 3 workers ÷ 1 worker, per round (median) | "
                 f"{results['throughput_ratio_3_to_1_median']} | | | |")  # fmt: skip
    lines += ["", "| delivery | same worker p50 | p99 | other worker p50 | p99 |",
              "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for key, label in (("stop_ms", "Stop → `turn_stopped`"),
                       ("approval_first_event_ms", "decision → first event"),
                       ("approval_turn_end_ms", "decision → continued turn's end")):  # fmt: skip
        same, other = results[key]["same worker"], results[key]["other worker"]
        lines.append(f"| {label} | {same['p50']} ms | {same['p99']} ms | {other['p50']} ms "
                     f"| {other['p99']} ms |")  # fmt: skip
    table = "\n".join(lines)
    print(table)
    return table


def main() -> int:
    dsn = postgres_dsn_or_rerun(__file__)
    sys.path.insert(0, str(ROOT))  # the fleet is the tests' own fixture
    from tests.ui._fleet import TOKEN, start_fleet
    from tests.ui._fleet_net import loopback_socket, url_of

    HEADERS.update({"authorization": f"Bearer {TOKEN}", "x-csrf-token": Secrets(token=TOKEN).csrf})
    with (
        tempfile.TemporaryDirectory() as directory,
        start_fleet(dsn, Path(directory), ui_workers=3, mcp_workers=0, store_pool=10) as fleet,
    ):
        sock = loopback_socket()
        fleet.loopback.proxy(sock, [fleet.ui_workers[0].url])  # the same proxy, one worker
        start_load = os.getloadavg()[0]
        workers = [w.url for w in fleet.ui_workers]
        results = asyncio.run(_bench(workers, fleet.ui, url_of(sock)))
    meta = machine_meta(turns=TURNS, throughput_rounds=THROUGHPUT_ROUNDS,
                        delivery_rounds=DELIVERY_ROUNDS,
                        load_average_1m_at_start=round(start_load, 2))  # fmt: skip
    print(f"load average {meta['load_average_1m_at_start']} → {meta['load_average_1m']}, "
          f"{meta['cpus']} cores")  # fmt: skip
    table = _table(results)
    write_results("fleet", {**meta, **results}, table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
