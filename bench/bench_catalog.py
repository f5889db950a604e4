"""Catalog benchmarks: declarations for 500 tools, validation per call, search over 2,000 tools.

Run: `python bench/bench_catalog.py`. Prints a table of medians and writes
`bench/results/catalog.json`. Targets: validation ≤ 20 µs per typical object, search ≤ 2 ms.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clawcell import Tool
from clawcell.catalog import Catalog
from clawcell.catalog._contracts import ToolContract

RESULTS = Path(__file__).parent / "results" / "catalog.json"
WORDS = [
    "ship",
    "invoice",
    "ticket",
    "weather",
    "report",
    "mail",
    "calendar",
    "file",
    "search",
    "user",
    "order",
    "stock",
]


def _tool(index: int) -> Tool:
    word, other = WORDS[index % len(WORDS)], WORDS[(index * 7) % len(WORDS)]
    parameters = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": f"{word} id"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
            "mode": {"enum": ["fast", "full"]},
        },
        "required": ["id"],
        "additionalProperties": False,
    }
    output = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "total": {"type": "number"}},
            "required": ["id", "total"],
            "additionalProperties": False,
        },
    }
    return Tool(
        name=f"{word}_{other}_{index}",
        description=f"Find {word} records and summarise {other} totals.",
        parameters=parameters,
        output_schema=output,
        execute=print,
    )


def _median_seconds(action: Callable[[], Any], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench_declarations() -> float:
    def build() -> None:
        catalog = Catalog([_tool(i) for i in range(500)])
        catalog.exec_tool()
        for binding in catalog.bindings:
            catalog.api_read(f"tools/{binding.callable_name}.d.ts")

    return _median_seconds(build, 5)


def bench_validation() -> float:
    contract = ToolContract(name="t", parameters=_tool(0).parameters, output_schema=None)
    value = {"id": "a-17", "limit": 10, "mode": "fast"}
    loops = 10_000

    def run() -> None:
        for _ in range(loops):
            contract.check_input(value)

    return _median_seconds(run, 7) / loops


def bench_search() -> float:
    catalog = Catalog([_tool(i) for i in range(2000)])
    queries = ["overdue invoice totals", "weather report", "zzzz_missing_tool", "calendar"]

    def run() -> None:
        for query in queries:
            catalog.search(query, 8)

    return _median_seconds(run, 50) / len(queries)


def main() -> None:
    rows = {
        "declarations_500_tools_ms": bench_declarations() * 1e3,
        "input_validation_per_call_us": bench_validation() * 1e6,
        "search_2000_tools_ms": bench_search() * 1e3,
    }
    targets = {"input_validation_per_call_us": 20.0, "search_2000_tools_ms": 2.0}
    print(f"{'benchmark':<32} {'median':>10} {'target':>8}")
    for name, value in rows.items():
        target = targets.get(name)
        print(f"{name:<32} {value:>10.3f} {'' if target is None else f'<= {target:g}':>8}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {"python": platform.python_version(), "medians": rows, "targets": targets}, indent=2
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
