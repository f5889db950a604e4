"""A sandboxed command holds no privilege, whoever starts clawcell (root here, and `nobody`).

The probe (`data/sandbox_probe.py`) runs inside the sandbox and reports what it may do. As
root it runs through `exec`; as an unprivileged host user the same sandbox argument vector
runs under `runuser -u nobody`, the code path where bubblewrap maps the sandbox uid onto an
unprivileged host uid. Both must give the same answers.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawcell.tools import ShellSettings, shell
from clawcell.tools._sandbox import ETC_ENTRIES, SANDBOX_UID, Sandbox
from clawcell.tools._seccomp import TABLES

from .test_shell import run

PROBE = (Path(__file__).parent / "data" / "sandbox_probe.py").read_text()
NUMBERS = json.dumps(TABLES[platform.machine()][1])
COMMAND = f"python3 probe.py '{NUMBERS}'"


def _as_root(workspace: Path) -> dict[str, Any]:
    settings = ShellSettings(approval="never", sandbox="required")
    [done] = run(shell(workspace, settings=settings), ("exec", {"command": COMMAND}))
    assert done["status"] == "completed", done["stderr"]
    return json.loads(done["stdout"])


def _as_nobody(workspace: Path) -> dict[str, Any]:
    sandbox = Sandbox.choose(workspace, "required", tmp_bytes=1024**2)
    wrapped = sandbox.argv(["/bin/sh", "-c", COMMAND], workspace)
    try:
        done = subprocess.run(
            ["runuser", "-u", "nobody", "--", *wrapped.argv],
            pass_fds=wrapped.fds,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        for fd in wrapped.fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module", params=["root", "nobody"])
def probed(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    """The probe's report, run by root and by an unprivileged host user."""
    workspace = Path(tempfile.mkdtemp(prefix="clawcell-probe-")).resolve()
    try:
        (workspace / "probe.py").write_text(PROBE)
        if request.param == "nobody":
            os.chown(workspace, 65534, 65534)
            yield "nobody", _as_nobody(workspace)
        else:
            yield "root", _as_root(workspace)
    finally:
        shutil.rmtree(workspace)


def test_the_host_runs_these_tests_as_root() -> None:
    # The root case is the one that failed (CI and containers run as root): it must be tested.
    assert os.geteuid() == 0


def test_a_command_runs_as_an_unprivileged_uid_without_capabilities(
    probed: tuple[str, dict[str, Any]],
) -> None:
    _, report = probed
    assert (report["uid"], report["gid"]) == (SANDBOX_UID, SANDBOX_UID)
    zero = "0000000000000000"
    assert (report["CapEff"], report["CapPrm"], report["CapBnd"]) == (zero, zero, zero)
    assert (report["Seccomp"], report["NoNewPrivs"]) == ("2", "1")


def test_privileged_system_calls_are_refused_and_fork_still_works(
    probed: tuple[str, dict[str, Any]],
) -> None:
    _, report = probed
    expected = {name: "EPERM" for name in report["calls"]} | {"clone3": "ENOSYS"}
    assert report["calls"] == expected
    assert report["fork"] == "7"


def test_only_the_listed_etc_entries_are_visible_and_shadow_is_not(
    probed: tuple[str, dict[str, Any]],
) -> None:
    _, report = probed
    assert report["shadow"] is False and report["ssh"] is False
    listed = {name.split("/")[0] for name in ETC_ENTRIES if os.path.lexists(f"/etc/{name}")}
    assert set(report["etc"]) == listed | {"passwd", "group"}


def test_nothing_outside_the_workspace_and_the_private_tmp_is_writable(
    probed: tuple[str, dict[str, Any]],
) -> None:
    _, report = probed
    assert report["writes"] == {
        "/etc/clawcell-probe": "EROFS",
        "/usr/clawcell-probe": "EROFS",
        "/clawcell-probe": "EROFS",
        "/dev/clawcell-probe": "EROFS",
        "/proc/sys/kernel/hostname": "EROFS",
        "/proc/sys/kernel/core_pattern": "EROFS",
        "/proc/sys/vm/drop_caches": "EROFS",
    }
    assert not Path("/etc/clawcell-probe").exists()
