"""The child of `compare_leg_split.py`: `wait` legs cut into five stretches under callgrind.

Arguments: `guest` or `loop` (the path cells run on) and a count of measured legs. It patches
the names the cell and the lifecycle look up at call time (`run_turn`, `leg_envelope`) to call
`math.lgamma` around them, which callgrind is told to dump before: each `wait` is then five
dumps, `pre` (the call down to the guest turn), `seg` (the turn: the crossing, on the default
path with its hand-off, and the report's parse), `mid` (what the cell and the lifecycle do
with the report, up to the envelope), `env` (`leg_envelope`) and `post` (the leg's end: the
guest's release, the returns). Labels go to `$LABELS`, one a line.
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
from pathlib import Path
from typing import Any

import clawcell._cell._cell as cell_module
import clawcell._runs._lifecycle as lifecycle_module
from clawcell import CodeMode, Limits, Tool

PARK = "await yield_control('bench');\nreturn 1;"
_labels: list[str] = []
_measuring = [False]
_run_turn = cell_module.run_turn
_leg_envelope = lifecycle_module.leg_envelope


def _mark(label: str) -> None:
    _labels.append(label)
    math.lgamma(2.5)


async def _run_turn_marked(*args: Any, **kwargs: Any) -> Any:
    if _measuring[0]:
        _mark("pre")
    result = await _run_turn(*args, **kwargs)
    if _measuring[0]:
        _mark("seg")
    return result


def _leg_envelope_marked(*args: Any) -> Any:
    if _measuring[0]:
        _mark("mid")
    envelope = _leg_envelope(*args)
    if _measuring[0]:
        _mark("env")
    return envelope


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


async def main(thread: bool, count: int) -> None:
    cell_module.run_turn = _run_turn_marked  # pyright: ignore[reportAttributeAccessIssue]
    lifecycle_module.leg_envelope = _leg_envelope_marked  # pyright: ignore[reportAttributeAccessIssue]
    tools = [Tool(name="echo", execute=_echo, parameters={"type": "object"})]
    limits = Limits(timeout_ms=60_000)
    async with CodeMode(tools, limits=limits, guest_thread=thread) as mode:
        for _ in range(20):
            parked = await mode.exec(PARK)
            await mode.wait(parked["runId"])
        _mark("warm")
        for _ in range(count):
            parked = await mode.exec(PARK)
            _mark("park")
            _measuring[0] = True
            done = await mode.wait(parked["runId"])
            _mark("post")
            _measuring[0] = False
            assert done["status"] == "completed", done
    _mark("end")
    Path(os.environ.get("LABELS", os.devnull)).write_text("\n".join(_labels) + "\n")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] == "guest", int(sys.argv[2])))
