"""Tools for the worker processes of `test_workers.py` (loaded with `--tools`).

`mark` appends the occurrence it is called for to the file `$CLAWCELL_TEST_MARKS` (the side
effect the test counts); `hold` keeps a run busy so that a worker can be killed mid-run.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from clawcell import Tool


async def _mark(params: dict[str, Any]) -> dict[str, Any]:
    line = json.dumps({"due": params["due"], "pid": os.getpid()})
    with open(os.environ["CLAWCELL_TEST_MARKS"], "a", encoding="utf-8") as marks:
        marks.write(line + "\n")
    return {"ok": True}


async def _hold(params: dict[str, Any]) -> dict[str, Any]:
    await asyncio.sleep(float(params["ms"]) / 1000)
    return {"ok": True}


TOOLS = [Tool(name="mark", execute=_mark), Tool(name="hold", execute=_hold)]
