"""Time `_jsjson.dumps` and `OutputLedger.project`/`fit` on typical envelopes.

Run: `.venv/bin/python bench/bench_output.py`. Prints medians (microseconds) and writes
`bench/results/output.json`. A script, not a test: timings never gate anything.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clawcell._jsjson import dumps
from clawcell.envelope import ModelBudget, OutputLedger

TELEMETRY = {
    "catalogSize": 8,
    "sources": {"openclaw": 8, "mcp": 0, "client": 0},
    "counterScope": "scope-0123456789abcdef",
    "searchCount": 0,
    "describeCount": 0,
    "callCount": 2,
    "visibleTools": ["exec", "wait"],
}
ROWS = [{"id": i, "paid": i % 2 == 0, "tons": i * 1.5, "label": "row 🦞"} for i in range(100)]


def _median_us(run: Callable[[], object], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        run()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def _envelope(output: list[Any], value: Any) -> dict[str, Any]:
    return {
        "status": "completed",
        "replaySafe": False,
        "telemetry": TELEMETRY,
        "output": output,
        "value": value,
    }


def _ledger(items: list[str], max_bytes: int = 65_536) -> OutputLedger:
    ledger = OutputLedger(max_bytes)
    for item in items:
        ledger.append(item)
    return ledger


def main() -> None:
    small_items = [dumps({"type": "text", "text": "hello"})]
    many_items = [dumps({"type": "text", "text": f"item {i}"}) for i in range(300)]
    big_item = [dumps({"type": "text", "text": "é中" * 20_000})]
    rows_json = dumps(ROWS)
    budget = ModelBudget.for_context(32_000)

    def fit_model(items: list[str], value: str) -> None:
        ledger = _ledger(items)
        ledger.fit(
            value_json=value,
            accept=lambda p: budget.accepts(dumps(_envelope(p.output, p.value))),
        )

    cases: dict[str, Callable[[], object]] = {
        "dumps small envelope": lambda: dumps(_envelope([{"type": "text", "text": "hi"}], 1)),
        "dumps envelope with 100 rows (floats)": lambda: dumps(_envelope([], ROWS)),
        "project return 1 (fresh ledger)": lambda: _ledger([]).project(value_json="1"),
        "project 1 text item + value": lambda: _ledger(small_items).project(value_json="1"),
        "project 300 items, 2 KiB budget": lambda: _ledger(many_items, 2048).project(
            value_json='"done"'
        ),
        "project 60 KB item, 64 KiB budget (marker)": lambda: _ledger(big_item).project(
            value_json="2"
        ),
        "fit 100 rows to a 32k-token model": lambda: fit_model(small_items, rows_json),
        "fit 60 KB item to a 32k-token model": lambda: fit_model(big_item, "2"),
    }
    results = {name: _median_us(run, 200) for name, run in cases.items()}
    width = max(map(len, results))
    print(f"{'case':<{width}}  median µs")
    for name, median in results.items():
        print(f"{name:<{width}}  {median:9.1f}")
    out = Path(__file__).parent / "results" / "output.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"unit": "microseconds (median)", "results": results}, indent=2))


if __name__ == "__main__":
    main()
