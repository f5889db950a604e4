"""Bounds that bind every user, root included: processes, and nothing outlives `process kill`.

These run as root (CI does): `RLIMIT_NPROC` does not bind root, so the process bound comes
from a pids cgroup; the unsandboxed case also runs with no cgroup at all (the reaper alone).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Literal

import pytest

from clawcell.catalog import Catalog
from clawcell.tools import ShellSettings, shell
from clawcell.tools._shell._cgroup import Cgroups

from .test_shell import run

FORKS = """python3 -c '
import os, time
n = 0
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print(n)
'"""
DAEMON = "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' > /dev/null 2>&1 < /dev/null &"


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")  # a zombie has ended; only its parent's wait is missing


def test_this_host_can_make_pids_cgroups() -> None:
    # The root cases below rely on it; CI runs as root with a writable pids hierarchy.
    assert os.geteuid() == 0 and Cgroups.find() is not None


@pytest.mark.parametrize("sandbox", ["required", "off"])
def test_max_processes_binds_a_command_started_by_root(
    root: Path, sandbox: Literal["required", "off"]
) -> None:
    settings = ShellSettings(approval="never", sandbox=sandbox, max_processes=16)
    [done] = run(shell(root, settings=settings), ("exec", {"command": FORKS}))
    assert 1 <= int(done["stdout"]) < 16


def _no_cgroups() -> None:
    return None


@pytest.fixture(params=["cgroup", "reaper only"])
def cgroups(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """With the host's pids cgroups, and as a host without any."""
    if request.param == "reaper only":
        monkeypatch.setattr(Cgroups, "find", _no_cgroups)
    return str(request.param)


def test_a_setsid_daemon_does_not_survive_process_kill(root: Path, cgroups: str) -> None:
    tools = shell(root, settings=ShellSettings(approval="never", sandbox="off"))
    catalog = Catalog(tools)

    async def main() -> tuple[int, Any]:
        command = f"{DAEMON} while [ ! -s daemon.pid ]; do :; done; echo up; exec sleep 300"
        started = await catalog.call("exec", {"command": command, "background": True})
        sid = started["sessionId"]
        polled = await catalog.call("process", {"action": "poll", "sessionId": sid})
        while "up" not in polled["aggregated"]:
            polled = await catalog.call("process", {"action": "poll", "sessionId": sid})
        daemon = int((root / "daemon.pid").read_text())
        assert not gone(daemon)
        return daemon, await catalog.call("process", {"action": "kill", "sessionId": sid})

    daemon, killed = asyncio.run(main())
    for tool in tools:
        if tool.on_close is not None:
            tool.on_close()
    assert killed["wasRunning"] is True
    assert gone(daemon)


def test_a_setsid_daemon_does_not_outlive_a_command_that_ended(root: Path, cgroups: str) -> None:
    settings = ShellSettings(approval="never", sandbox="off")
    command = f"{DAEMON} while [ ! -s daemon.pid ]; do :; done; echo done"
    [done] = run(shell(root, settings=settings), ("exec", {"command": command}))
    assert (done["status"], done["stdout"]) == ("completed", "done\n")
    assert gone(int((root / "daemon.pid").read_text()))


@pytest.mark.parametrize("sandbox", ["required", "off"])
def test_a_command_that_grows_the_workspace_past_max_write_bytes_is_killed(
    root: Path, sandbox: Literal["required", "off"]
) -> None:
    # Many files, each under `file_size_bytes`: only the workspace budget can stop this.
    settings = ShellSettings(approval="never", sandbox=sandbox, max_write_bytes=4 * 1024**2)
    writer = "i=0; while :; do head -c 1048576 /dev/zero > f$i; i=$((i+1)); sleep 0.05; done"
    [done] = run(shell(root, settings=settings), ("exec", {"command": writer}))
    assert (done["status"], done["exitReason"]) == ("failed", "write_limit")
    assert done["message"].startswith("The command grew the workspace by more than 4194304 bytes")
    assert len(list(root.iterdir())) >= 4


def test_a_closed_shell_leaves_no_cgroup_behind(root: Path) -> None:
    cgroups = Cgroups.find()
    assert cgroups is not None
    settings = ShellSettings(approval="never", sandbox="off")
    started, *_ = run(
        shell(root, settings=settings),
        ("exec", {"command": "sleep 60", "background": True}),
        ("exec", {"command": "true"}),
        ("exec", {"command": f"{DAEMON} echo left"}),
    )
    instance = started["sessionId"].split("_")[1]
    assert [p for p in cgroups.parent.iterdir() if p.name.startswith(f"clawcell-{instance}-")] == []
