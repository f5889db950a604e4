"""The tools every worker of the fleet (`tests/ui/_fleet.py`) serves: `hold` runs until it is
cancelled, `deploy` needs approval and appends one line to the file `$CLAWCELL_TEST_FLEET_LOG`
names, so a test counts its effects across processes, and `canvas` stores a hosted document
in the fleet's database (`$CLAWCELL_TEST_FLEET_STORE`)."""

from __future__ import annotations

import asyncio
import os
from typing import Any, Final

from clawcell import Tool
from clawcell.store import PostgresStore
from clawcell.ui import canvas_tool

LOG: Final = "CLAWCELL_TEST_FLEET_LOG"
STORE: Final = "CLAWCELL_TEST_FLEET_STORE"


async def _hold(_: dict[str, Any]) -> str:
    await asyncio.Event().wait()  # only cancellation (or the process's death) ends it
    return "never"


async def _deploy(params: dict[str, Any]) -> str:
    with open(os.environ[LOG], "a", encoding="utf-8") as log:
        log.write(f"{params.get('target', '?')} by {os.getpid()}\n")
    return "deployed"


def tools() -> list[Tool]:
    """The fleet's tools (a factory: the canvas tool's store connects on first use)."""
    return [
        Tool(name="hold", execute=_hold),
        Tool(name="deploy", execute=_deploy, approval="always"),
        canvas_tool(PostgresStore(os.environ[STORE], max_size=2)),
    ]
