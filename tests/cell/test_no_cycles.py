"""A cell leaves no reference cycle behind: what it made is freed when the last reference goes,
not by the cyclic collector every few runtimes (each of those collections walked every
runtime's objects: 120-150 µs, docs/benchmarks.md "A new runtime: the catalog cache")."""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from typing import Any

from clawcell import CodeMode, Tool
from clawcell.approvals import ToolPolicy
from tests.conftest import in_fresh_interpreter

CELL = "const a = await echo({ n: 1 }); const b = await echo({ n: 2 }); return a.n + b.n;"


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


def _garbage_of(cells: int, **options: Any) -> Counter[str]:
    """The objects (by type) the cyclic collector finds after `cells` cells, each in a new
    `CodeMode`, once a few warm-up cells ran: empty when they left no cycle."""

    async def main() -> Counter[str]:
        tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
        for _ in range(3):
            async with CodeMode(tools, **options) as mode:
                assert (await mode.exec(CELL))["value"] == 3
        gc.collect()
        gc.disable()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collection finds stays in `gc.garbage`
        try:
            for _ in range(cells):
                async with CodeMode(tools, **options) as mode:
                    assert (await mode.exec(CELL))["value"] == 3
            gc.collect()
            return Counter(type(found).__qualname__ for found in gc.garbage)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()

    return asyncio.run(main())


def plain_runtimes() -> dict[str, int]:
    return dict(_garbage_of(10))


def runtimes_with_a_policy() -> dict[str, int]:
    return dict(_garbage_of(10, policy=ToolPolicy(deny=["delete_*"])))


# Each in a new process: in a whole xdist run the collector once found 3,034 objects after
# the policy's ten runtimes (stop 49), never reproduced alone, after the directories that
# share its worker or under load; it finds whatever became garbage meanwhile, an earlier
# test's leftovers included. A cycle a runtime makes shows in a new process too.


def test_new_runtimes_and_their_cells_leave_no_cycles() -> None:
    assert in_fresh_interpreter(__name__, "plain_runtimes") == {}


def test_a_runtime_with_a_tool_policy_leaves_no_cycles() -> None:
    assert in_fresh_interpreter(__name__, "runtimes_with_a_policy") == {}
