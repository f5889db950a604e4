"""Mixed guest-thread modes in one process: each native-code flood runs in a guest-thread
`CodeMode` while a loop-thread one works beside it, and the other way round. The flood ends
in its recorded timeout (its budget and backstop are its own, D8), the bystander finishes
its work with the right value, and clean probes afterwards in both see nothing of either."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from tests.conftest import echo_tool, failure, run
from tests.hostile import _corpus as corpus
from tests.hostile.test_hostile_cells import (
    CASES,
    TIMEOUT,
    _probe,  # pyright: ignore[reportPrivateUsage]
)
from tests.hostile.test_hostile_corpus import (
    NATIVE,
    RECORDED,
    _expect,  # pyright: ignore[reportPrivateUsage]
    _summary,  # pyright: ignore[reportPrivateUsage]
    _tools,  # pyright: ignore[reportPrivateUsage]
)

# The bystander computes ~0.3 s on an idle machine, across the flood's 250 ms deadline.
BYSTANDER = (
    "let s = 0;\nfor (let i = 0; i < 80; i++) {\n  s += (await echo({ i })).i;\n"
    "  let x = 0;\n  for (let j = 0; j < 4e4; j++) x += j;\n"
    "  await new Promise((r) => setTimeout(r, 0));\n}\nreturn s;"
)
ROOMY = Limits(timeout_ms=60_000)
SIDES = [
    pytest.param(True, id="flood_on_guest_thread"),
    pytest.param(False, id="flood_on_loop_thread"),
]


@pytest.mark.parametrize("flood_on_guest_thread", SIDES)
@pytest.mark.parametrize("name", list(corpus.NATIVE_FLOODS))
def test_a_flood_beside_a_cell_of_the_other_mode_keeps_its_own_budget(
    name: str, flood_on_guest_thread: bool
) -> None:
    async def main() -> list[Any]:
        async with (
            CodeMode(_tools(), limits=NATIVE, guest_thread=flood_on_guest_thread) as flood,
            CodeMode([echo_tool()], limits=ROOMY, guest_thread=not flood_on_guest_thread) as other,
        ):
            clean = [await _probe(flood), await _probe(other)]
            flooded, worked = await asyncio.gather(
                flood.exec(corpus.NATIVE_FLOODS[name]), other.exec(BYSTANDER)
            )
            after = [await _probe(flood), await _probe(other)]
            return [_summary(flooded), worked["status"], worked.get("value"), clean == after]

    summary, status, value, clean = run(main())
    assert summary == _expect(RECORDED[f"native-{name}"])
    assert (status, value) == ("completed", 3160)
    assert clean is True


@pytest.mark.parametrize("flood_on_guest_thread", SIDES)
def test_a_native_sort_beside_a_busy_cell_of_the_other_mode_is_stopped_by_its_backstop(
    flood_on_guest_thread: bool,
) -> None:
    # D8: the loop-thread side's deadline bookkeeping cancelled the guest thread's backstop,
    # and a 2.7 s native sort in a 250 ms cell ran to completion.
    sort = CASES["native_sort_of_3e6_strings"]

    async def main() -> list[Any]:
        async with (
            CodeMode(limits=sort.limits, guest_thread=flood_on_guest_thread) as flood,
            CodeMode([echo_tool()], limits=ROOMY, guest_thread=not flood_on_guest_thread) as other,
        ):
            sorted_, worked = await asyncio.gather(flood.exec(sort.code), other.exec(BYSTANDER))
            return [failure(sorted_)[:3], worked.get("value"), (await flood.exec("return 1;"))]

    stopped, value, after = run(main())
    assert stopped == ("timeout", "guest", TIMEOUT)
    assert value == 3160
    assert after["value"] == 1
