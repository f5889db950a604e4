"""One cell composes `automations`, `exec` and `write`: it schedules a job whose headless cell
runs a command and saves a report; a worker then runs it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.automations import PayloadRunner, Scheduler
from clawcell.store import MemoryStore, job_store_for
from clawcell.tools import ShellSettings, automations, shell, workspace

CELL = """
const job = await automations({ action: "add", job: {
  name: "disk report",
  schedule: { kind: "every", everyMs: 3600000 },
  payload: { kind: "cell", maxToolCalls: 2, code: `
    const du = await exec({ command: "du -sk notes | cut -f1" });
    await write({ path: "reports/du.txt", content: du.stdout });
    return { kib: Number(du.stdout.trim()) };` },
} });
const queued = await automations({ action: "run", jobId: job.id });
const { total } = await automations({ action: "list" });
return { id: job.id, every: job.schedule.everyMs, queued: queued.enqueued, total };
"""


def test_a_cell_schedules_a_job_whose_headless_cell_runs_a_command(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("x" * 5000)
    store = MemoryStore()
    tools = [*workspace(tmp_path), *shell(tmp_path, settings=ShellSettings(approval="never"))]
    scheduler = Scheduler(job_store_for(store), PayloadRunner(tools=tools, session_store=store))

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with CodeMode(
            [*tools, *automations(store, scheduler=scheduler)], limits=Limits(timeout_ms=30_000)
        ) as mode:
            envelope = dict(await mode.exec(CELL))
            await scheduler.tick()
            await scheduler.drain()
            job_id = envelope["value"]["id"]
            runs = await mode.exec(
                f"return await automations({{ action: 'runs', jobId: {job_id!r} }});"
            )
        return envelope, dict(runs)

    envelope, runs = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert {k: v for k, v in envelope["value"].items() if k != "id"} == {
        "every": 3_600_000,
        "queued": True,
        "total": 1,
    }
    [entry] = runs["value"]["entries"]
    assert (entry["trigger"], entry["status"], entry["envelopeStatus"]) == (
        "manual",
        "ok",
        "completed",
    )
    kib = (tmp_path / "reports" / "du.txt").read_text().strip()
    assert entry["summary"] == f'{{"kib": {kib}}}' and int(kib) >= 5
