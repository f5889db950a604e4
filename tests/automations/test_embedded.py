"""`embedded_worker`: the worker `clawcell serve` and `clawcell mcp serve` run beside
themselves when `[builtin_tools.automations]` sets `worker = true`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from clawcell import Tool
from clawcell.automations import embedded_worker
from clawcell.catalog import Catalog
from clawcell.tools import from_config


def test_a_worker_runs_beside_the_command_only_when_the_config_asks(tmp_path: Path) -> None:
    marks: list[Any] = []

    async def mark(params: dict[str, Any]) -> bool:
        marks.append(params)
        return True

    def tools() -> list[Tool]:
        return [Tool(name="mark", execute=mark)]

    config: dict[str, Any] = {"automations": {"store": str(tmp_path / "jobs.db"), "worker": True}}
    job = {"schedule": {"kind": "every", "everyMs": 1000},
           "payload": {"kind": "cell", "code": "return await mark({});"}}  # fmt: skip

    async def main() -> tuple[Any, Any]:
        catalog = Catalog(from_config(config))
        await catalog.call("automations", {"action": "add", "job": job})
        async with embedded_worker({"automations": {**config["automations"], "worker": False}},
                                   tools) as idle:  # fmt: skip
            assert idle is None
        async with embedded_worker(config, tools) as worker:
            while not marks:
                await asyncio.sleep(0.05)
        return worker, worker.running if worker else None

    worker, running = asyncio.run(main())
    assert worker is not None and running is False  # stopped with the block
    assert marks[0] == {}
