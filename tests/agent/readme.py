"""Running the README's agent example against a loopback Chat Completions server."""

from __future__ import annotations

import ast
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from tests.agent._wire import WireServer
from tests.agent.models.test_openai_chat import text_stream, tool_call_stream
from tests.conftest import run

CELL = "const rows = await list_shipments(); return rows.filter((r) => !r.paid).map((r) => r.id);"
ROOT = Path(__file__).resolve().parents[2]


def run_agent_example(example: str, cwd: Path) -> list[Any]:
    """Run `example` in a new process whose `openai.AsyncOpenAI()` reaches a local server.

    Returns what it printed, each line read back as a Python literal.
    """
    return run(_run(example, cwd))


async def _run(example: str, cwd: Path) -> list[Any]:
    answers = [tool_call_stream(CELL, text=()), text_stream("b-202 is ", "unpaid.")]
    async with WireServer(answers) as server:
        env = {**os.environ, "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-test"}
        env["PYTHONPATH"] = str(ROOT)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", example, cwd=cwd, env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    if process.returncode != 0:
        raise AssertionError(err.decode())
    return [ast.literal_eval(line) for line in out.decode().splitlines()]
