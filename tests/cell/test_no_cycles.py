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


def _garbage_of_runtimes(**options: Any) -> Counter[str]:
    """`_garbage_of(10, **options)`, measured again when the first finds garbage. The
    collector finds whatever became garbage meanwhile, an earlier test's leftovers on other
    threads included: 3,034 objects once in a whole xdist run (stop 49), never reproduced
    alone or after the directories that share its worker. A cycle a runtime makes is there
    in both measurements."""
    first = _garbage_of(10, **options)
    return first and _garbage_of(10, **options)


def test_new_runtimes_and_their_cells_leave_no_cycles() -> None:
    assert _garbage_of_runtimes() == Counter()


def test_a_runtime_with_a_tool_policy_leaves_no_cycles() -> None:
    assert _garbage_of_runtimes(policy=ToolPolicy(deny=["delete_*"])) == Counter()
