"""Automatic retention seen through `CodeMode`: the one decision, restart-safe cells included."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.envelope._retention import NOT_RETAINED_RESTART_SAFE, RETAINED_GUIDANCE

BIG = "return Array.from({ length: 4000 }, (_, i) => ({ i, label: 'row ' + i }))"
LIMITS = Limits(timeout_ms=60_000, max_output_bytes=2048)


def _exec(arguments: dict[str, Any]) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with CodeMode(limits=LIMITS) as mode:
            return await mode.call_tool("exec", arguments)

    return asyncio.run(main())


def test_an_oversized_value_of_a_restart_safe_cell_says_it_is_not_retained_in_that_mode() -> None:
    envelope = _exec({"code": BIG, "restartSafe": True})

    assert envelope["status"] == "completed"
    assert envelope["value"]["truncated"] is True
    assert envelope["value"]["guidance"] == NOT_RETAINED_RESTART_SAFE
    assert "reference" not in envelope["value"]


def test_an_oversized_value_of_an_ordinary_cell_is_retained() -> None:
    envelope = _exec({"code": BIG})

    assert envelope["value"]["guidance"] == RETAINED_GUIDANCE
    assert envelope["value"]["reference"]["count"] == 4000
