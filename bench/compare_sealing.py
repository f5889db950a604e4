"""The cost of sealing durable records (issue 28): `bench_parking.py` on this tree against
another source tree (default: `/work/main/src`), alternately, plus seal/verify alone.

Run: `.venv/bin/python bench/compare_sealing.py [OTHER_SRC] [SETS] [REPEAT]`. Each set runs
`bench_parking.bench` once per tree in a fresh process, the order swapped every set (ABBA),
so drifting machine load hits both alike; the table shows the median over the sets of each
measure's median. Writes `bench/results/sealing.json`. A script, not a test.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
THIS_SRC = HERE.parent / "src"
RESULTS = HERE / "results" / "sealing.json"
CHILD = """
import asyncio, json, sys, tempfile
from pathlib import Path
sys.path.insert(0, {bench!r})
import bench_parking
with tempfile.TemporaryDirectory() as d:
    print(json.dumps(asyncio.run(bench_parking.bench(Path(d), repeat={repeat}))))
"""


def _one(src: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = CHILD.format(bench=str(HERE), repeat=repeat)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _seal_cost(sizes: list[int], repeat: int = 200) -> dict[str, dict[str, float]]:
    sys.path.insert(0, str(THIS_SRC))
    from clawcell._runs._sealed import open_record, seal_record
    from clawcell.store import ParkedRun, StateKeys

    keys = StateKeys(keys={"k": b"k" * 32}, active="k")
    meta: dict[str, Any] = {"version": 1, "cell": {"pending": []}, "expiresAt": 1.0}
    costs: dict[str, dict[str, float]] = {}
    for size in sizes:
        blob = os.urandom(size)
        seals: list[float] = []
        opens: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            sealed = seal_record(keys, "s", "cm_1", meta, blob)
            seals.append((time.perf_counter() - start) * 1000)
            run = ParkedRun(run_id="cm_1", blob=blob, meta=sealed, saved_at=0.0)
            start = time.perf_counter()
            open_record(keys, "s", run)
            opens.append((time.perf_counter() - start) * 1000)
        costs[str(size)] = {
            "seal_ms": statistics.median(seals),
            "open_ms": statistics.median(opens),
        }
    return costs


def main() -> None:
    other = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/main/src")
    sets = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for index in range(sets):
        order = [("before", other), ("after", THIS_SRC)]
        for side, src in order if index % 2 == 0 else order[::-1]:
            runs[side].append(_one(src, repeat))
    measures = list(runs["after"][0])
    table = {
        m: {side: statistics.median(r[m] for r in runs[side]) for side in ("before", "after")}
        for m in measures
    }
    print(f"{'measure':<34} {'before':>9} {'after':>9} {'change':>8}")
    for m, row in table.items():
        change = (row["after"] / row["before"] - 1) * 100
        print(f"{m:<34} {row['before']:>6.2f} ms {row['after']:>6.2f} ms {change:>+7.1f} %")
    costs = _seal_cost([64 * 1024, 512 * 1024, 2 * 1024 * 1024])
    for size, cost in costs.items():
        print(
            f"seal / open of a {int(size) // 1024} KiB snapshot: "
            f"{cost['seal_ms']:.3f} / {cost['open_ms']:.3f} ms"
        )
    RESULTS.write_text(
        json.dumps(
            {
                "sets": sets,
                "repeat": repeat,
                "medians_ms": table,
                "runs": runs,
                "seal_cost_ms": costs,
            },
            indent=2,
        )
        + "\n",
        "utf-8",
    )


if __name__ == "__main__":
    main()
