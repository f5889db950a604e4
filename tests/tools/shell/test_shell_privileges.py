"""A sandboxed command holds no privilege, whoever starts clawcell (root here, and not root).

The probe (`data/sandbox_probe.py`) runs inside the sandbox and reports what it may do. As
root it runs through `exec`; as an unprivileged host user the same sandbox argument vector
runs under `setpriv` with an unused uid, the code path where bubblewrap maps the sandbox uid
onto an unprivileged host uid; and as root on a host without a pids cgroup, where `exec`
starts bubblewrap as a leased host uid. All must give the same answers.
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
from clawcell.tools._shell._cgroup import Cgroups
from clawcell.tools._shell._rlimits import Rlimits
from clawcell.tools._shell._sandbox import ETC_ENTRIES, SANDBOX_UID, Sandbox
from clawcell.tools._shell._seccomp import TABLES

from .test_shell import run
from .test_shell_bounds import FORKS

PROBE = (Path(__file__).parents[1] / "data" / "sandbox_probe.py").read_text()
NUMBERS = json.dumps(TABLES[platform.machine()][1])
COMMAND = f"python3 probe.py '{NUMBERS}'"
UNPRIVILEGED = 61234  # a uid no process of this machine runs as (`RLIMIT_NPROC` counts them)
AS_UNPRIVILEGED = ("setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}",
                   "--clear-groups", "--")  # fmt: skip


def _as_root(workspace: Path, max_processes: int | None = None) -> dict[str, Any]:
    settings = ShellSettings(approval="never", sandbox="required", max_processes=max_processes)
    [done] = run(shell(workspace, settings=settings), ("exec", {"command": COMMAND}))
    assert done["status"] == "completed", done["stderr"]
    return json.loads(done["stdout"])


def _as_unprivileged(workspace: Path) -> dict[str, Any]:
    return json.loads(run_as_unprivileged(workspace, COMMAND))


def run_as_unprivileged(workspace: Path, command: str, limits: Rlimits | None = None) -> str:
    """`command`'s stdout, run in the sandbox by an unprivileged host uid."""
    sandbox = Sandbox.choose(workspace, "required", tmp_bytes=1024**2)
    wrapped = sandbox.argv(["/bin/sh", "-c", command], workspace)
    try:
        done = subprocess.run(
            [*AS_UNPRIVILEGED, *wrapped.argv],
            pass_fds=wrapped.fds,
            preexec_fn=None if limits is None else limits.preexec(),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        for fd in wrapped.fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _no_cgroups() -> None:
    return None


@pytest.fixture(scope="module", params=["root", "root, leased uid", "unprivileged"])
def probed(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    """The probe's report, run by root (with a pids cgroup, and without one: then the command
    runs as a leased host uid) and by an unprivileged host user."""
    workspace = Path(tempfile.mkdtemp(prefix="clawcell-probe-")).resolve()
    try:
        (workspace / "probe.py").write_text(PROBE)
        if request.param == "unprivileged":
            os.chown(workspace, UNPRIVILEGED, UNPRIVILEGED)
            yield "unprivileged", _as_unprivileged(workspace)
        elif request.param == "root, leased uid":
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Cgroups, "find", _no_cgroups)
                report = _as_root(workspace, 4096)  # set: raises unless a lease binds it
            yield "root, leased uid", report
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


def test_without_a_cgroup_rlimit_nproc_bounds_an_unprivileged_hosts_command() -> None:
    # The non-root path: no pids cgroup is joined here, only `RLIMIT_NPROC` (which counts
    # every process of that host uid, and binds because it is not root).
    limits = Rlimits(cpu_seconds=60, address_space_bytes=4 * 1024**3,
                     file_size_bytes=1024**3, max_processes=16)  # fmt: skip
    workspace = Path(tempfile.mkdtemp(prefix="clawcell-nproc-")).resolve()
    try:
        os.chown(workspace, UNPRIVILEGED, UNPRIVILEGED)
        forked = int(run_as_unprivileged(workspace, FORKS, limits))
    finally:
        shutil.rmtree(workspace)
    assert 1 <= forked < 16
