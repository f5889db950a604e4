"""What one agent turn asks of PostgreSQL: statements by kind, and commits (issue 39).

Run: `.venv/bin/python bench/bench_turn_statements.py [--label before]`. It uses
`CLAWCELL_TEST_POSTGRES_DSN` when set, or else re-runs itself under `scripts/pg-test-env`.
A script, not a test: it counts (`tests/store/postgres/_counting.py` wraps psycopg's
`execute`), so the figures do not depend on the machine's load.

The turn is `bench_cores.py`'s agent turn: a `ScriptedModel` makes one `exec` of
`compare_fastmcp.py`'s cell (three tool calls), then replies. One untimed turn first (the
session's turn row, a warm guest), then `TURNS` counted turns on one session; the lease is
30 s, so the background renewals (every 10 s) do not fall in the count. Prints a table and
writes `bench/results/turn_statements.{json,md}`, keeping the other labels' rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from _common import RESULTS, machine_meta, write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.store.postgres._counting import Counts, counting

ROOT = Path(__file__).resolve().parents[1]

DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
TURNS = 10


async def _count(dsn: str) -> Counts:
    from _mcp_tools import TOOLS  # pyright: ignore[reportMissingImports]
    from clawcell.agent import Agent, ScriptedModel, exec_call
    from clawcell.store import PostgresStore
    from compare_fastmcp import CELL_JS  # pyright: ignore[reportMissingImports]

    schema = f"bench_{uuid.uuid4().hex[:8]}"
    async with PostgresStore(dsn, schema=schema) as store:
        model = ScriptedModel([exec_call(CELL_JS), "done"] * (TURNS + 1))
        agent = Agent(model=model, tools=TOOLS, store=store)
        async for _ in agent.run("s", "warm"):
            pass
        with counting() as counts:
            for _ in range(TURNS):
                async for _ in agent.run("s", "go"):
                    pass
        await agent.aclose()
    return counts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="now", help="the row's name (e.g. before, after)")
    label = parser.parse_args().label
    dsn = os.environ.get(DSN_VARIABLE)
    if not dsn:
        script = ROOT / "scripts" / "pg-test-env"
        return subprocess.run([script, sys.executable, *sys.argv], check=False).returncode
    os.environ.setdefault("CLAWCELL_STATE_KEY", "bench:" + "A" * 44)
    counts = asyncio.run(_count(dsn))
    path = RESULTS / "turn_statements.json"
    data: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {"rows": {}}
    data["rows"][label] = {
        "statements_per_turn": counts.total / TURNS,
        "commits_per_turn": counts.commits / TURNS,
        "by_kind_per_turn": {k: v / TURNS for k, v in sorted(counts.statements.items())},
        "meta": machine_meta(turns=TURNS),
    }
    lines = [
        "| label | statements / turn | commits / turn | by kind |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, row in data["rows"].items():
        kinds = ", ".join(f"{k} {v:g}" for k, v in row["by_kind_per_turn"].items())
        lines.append(
            f"| {name} | {row['statements_per_turn']:g} | {row['commits_per_turn']:g} | {kinds} |"
        )
    table = "\n".join(lines)
    print(table)
    write_results(
        "turn_statements",
        data,
        f"# What one agent turn asks of PostgreSQL\n\n{TURNS} turns of `bench_cores.py`'s agent "
        "turn on one session, counted client-side (statements; commits = autocommit "
        f"statements + transaction blocks).\n\n{table}\n",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
