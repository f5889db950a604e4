"""`exec` and `process` from a cell through `clawcell.CodeMode`, approvals included."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.approvals import ToolPolicy
from clawcell.tools import ShellSettings, shell, workspace

LIMITS = Limits(timeout_ms=60_000)
BUILD = """\
printf 'int main(void) { return 0; }\\n' > main.c
echo "compiling main.c"; sleep 0.2
echo "linking app"; printf 'built\\n' > app.txt
echo "build ok"
"""
CELL = """
const started = await exec({ command: "sh build.sh", background: true });
let polled = await process({ action: "poll", sessionId: started.sessionId, timeout: 20000 });
while (polled.status === "running") {
  polled = await process({ action: "poll", sessionId: started.sessionId, timeout: 20000 });
}
const log = await process({ action: "log", sessionId: started.sessionId, limit: 2 });
const built = await read({ path: "app.txt" });
return { started: started.status, exit: polled.exitCode, tail: log.output, built: built.text };
"""


def test_a_cell_starts_a_background_build_polls_it_and_reads_its_log(root: Path) -> None:
    (root / "build.sh").write_text(BUILD)
    tools = [*workspace(root), *shell(root, settings=ShellSettings(approval="never"))]

    async def main() -> dict[str, Any]:
        async with CodeMode(tools, limits=LIMITS) as mode:
            return dict(await mode.exec(CELL))

    envelope = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == {
        "started": "running",
        "exit": 0,
        "tail": "linking app\nbuild ok\n",
        "built": "built\n",
    }


def test_a_gated_exec_waits_for_approval_and_runs_once(root: Path) -> None:
    code = 'return (await exec({ command: "echo ran >> runs.txt; cat runs.txt" })).stdout;'

    async def main() -> tuple[dict[str, Any], bool, dict[str, Any]]:
        async with CodeMode(shell(root), limits=LIMITS) as mode:
            parked = dict(await mode.exec(code))
            ran_before = (root / "runs.txt").exists()
            approval = parked["pendingApprovals"][0]
            await mode.decide(parked["runId"], approval["id"], "approve")
            return parked, ran_before, dict(await mode.wait(parked["runId"]))

    parked, ran_before, done = asyncio.run(main())
    assert (parked["status"], parked["reason"]) == ("waiting", "approval")
    assert parked["pendingApprovals"][0]["reason"] == (
        "`exec` runs a shell command: 'echo ran >> runs.txt; cat runs.txt'"
    )
    assert ran_before is False
    assert (done["status"], done["value"]) == ("completed", "ran\n")
    assert (root / "runs.txt").read_text() == "ran\n"


def test_allowed_command_patterns_and_the_policy_skip_the_approval(root: Path) -> None:
    settings = ShellSettings(allow_commands=("echo *",))
    tools = shell(root, settings=settings)

    async def main() -> list[str]:
        statuses: list[str] = []
        async with CodeMode(tools, limits=LIMITS) as mode:
            for command in ("echo allowed", "ls"):
                envelope = await mode.exec(f"return await exec({{ command: {command!r} }});")
                statuses.append(str(envelope["status"]))
        allowed = ToolPolicy(allow=["exec"])
        async with CodeMode(shell(root), limits=LIMITS, policy=allowed) as mode:
            envelope = await mode.exec('return await exec({ command: "ls" });')
            statuses.append(str(envelope["status"]))
        return statuses

    assert asyncio.run(main()) == ["completed", "waiting", "completed"]


def test_process_write_asks_but_poll_does_not(root: Path) -> None:
    code = """
    const s = await exec({ command: "cat", background: true });
    const polled = await process({ action: "poll", sessionId: s.sessionId });
    await process({ action: "write", sessionId: s.sessionId, data: "x", eof: true });
    return polled.status;
    """
    settings = ShellSettings(allow_commands=("cat",))

    async def main() -> dict[str, Any]:
        async with CodeMode(shell(root, settings=settings), limits=LIMITS) as mode:
            return dict(await mode.exec(code))

    parked = asyncio.run(main())
    assert parked["status"] == "waiting"
    [approval] = parked["pendingApprovals"]
    assert (approval["tool"], approval["input"]["action"]) == ("process", "write")


def test_closing_the_code_mode_kills_the_commands_its_cells_started(root: Path) -> None:
    settings = ShellSettings(approval="never", sandbox="off")
    code = 'return (await exec({ command: "sleep 60", background: true })).pid;'

    async def main() -> int:
        async with CodeMode(shell(root, settings=settings), limits=LIMITS) as mode:
            envelope = await mode.exec(code)
            pid = int(envelope["value"])
            os.kill(pid, 0)  # running while the CodeMode is open
            return pid

    pid = asyncio.run(main())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
