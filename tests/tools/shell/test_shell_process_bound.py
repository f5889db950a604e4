"""The process bound of a root host that cannot make a pids cgroup: a uid leased per command.

These run as root (CI does) with `Cgroups.find` patched to find nothing, which is the host the
gap was named for (a read-only `/sys/fs/cgroup`): `RLIMIT_NPROC` binds only because each
sandboxed command starts bubblewrap as a leased host uid. Real fork bombs run here; each is
bounded by `max_processes`, and the next command runs normally.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clawcell.catalog import Catalog
from clawcell.errors import ConfigurationError
from clawcell.tools import ShellSettings, shell
from clawcell.tools._shell import _process_bound, _uid_leases
from clawcell.tools._shell._cgroup import Cgroups
from clawcell.tools._shell._uid_leases import UidRange

from .test_shell import run
from .test_shell_bounds import FORKS, gone

BOUND = 16
WAIT = {"yieldMs": 600_000}  # wait for the end however loaded the host is (no deadline)
# Starts a bomb, then forks until the kernel refuses (the bound was reached) and reports the
# most tasks (threads included) its PID namespace ever held while it looked.
SATURATE = """python3 -c '
import os, subprocess, sys
bomb = subprocess.Popen(sys.argv[1:], stderr=subprocess.DEVNULL)
def tasks():
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n
peak, refused = 0, None
for _ in range(200000):
    peak = max(peak, tasks())
    try:
        child = os.fork()
    except OSError as exc:
        refused = exc.errno
        break
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
for _ in range(50):
    peak = max(peak, tasks())
print(peak, refused == 11)
' """
BOMBS = {
    "shell function": SATURATE + "bash -c ':(){ :|:& };:'",
    "python os.fork loop": SATURATE
    + "python3 -c 'import os\nwhile True:\n try: os.fork()\n except OSError: pass'",
    "thread bomb": SATURATE
    + "python3 -c 'import threading, time\n"
    + "while True:\n try: threading.Thread(target=time.sleep, args=(600,)).start()\n"
    + " except RuntimeError: pass'",
}


def _no_cgroups() -> None:
    return None


@pytest.fixture(autouse=True)
def no_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    """This host as one whose `/sys/fs/cgroup` cannot be written."""
    assert os.geteuid() == 0  # the root case is the one RLIMIT_NPROC alone does not bind
    monkeypatch.setattr(Cgroups, "find", _no_cgroups)


def _never(workspace: Path) -> None:
    return None


def _settings(**overrides: Any) -> ShellSettings:
    return ShellSettings(approval="never", sandbox="required", **overrides)


def _free(state: Path, uid: int) -> bool:
    """Whether no command holds `uid` now (its lease file can be locked)."""
    try:
        lock = os.open(state / "uids" / str(uid), os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(lock)
    return True


def _leftovers(found: UidRange) -> list[str]:
    """Running processes and mounts of uids no command holds (other test runs of this machine
    may hold some uids of the range meanwhile: theirs are not leftovers; zombies have ended,
    the host's init reaps them)."""
    out: list[str] = []
    for entry in Path("/proc").iterdir():
        try:
            uid = os.stat(entry).st_uid if entry.name.isdigit() else -1
        except OSError:
            continue
        in_range = found.first <= uid < found.first + found.count
        if in_range and _free(found.state, uid) and not gone(int(entry.name)):
            out.append(f"process {entry.name} of uid {uid}: {_status(entry)}")
    for line in _leased_mounts(found.state):
        uid = int(line.split(f"{found.state}/mounts/")[1].split()[0])
        if _free(found.state, uid):
            out.append(f"mount {line}")
    return out


def _status(entry: Path) -> str:
    try:
        lines = (entry / "status").read_text().splitlines()
    except OSError:
        return "ended"
    return ", ".join(line for line in lines if line.startswith(("Name", "State", "PPid", "NSpid")))


def _leased_mounts(state: Path) -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line for line in lines if f" {state}/mounts/" in line]


def test_leased_uids_are_this_hosts_process_bound(root: Path) -> None:
    assert UidRange.find(root) is not None


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_a_bomb_is_bounded_and_the_next_command_runs(root: Path, bomb: str) -> None:
    tools = shell(root, settings=_settings(max_processes=BOUND, timeout_seconds=300))
    done, after = run(
        tools, ("exec", {"command": BOMBS[bomb], **WAIT}), ("exec", {"command": "echo ok", **WAIT})
    )
    assert "stdout" in done, done
    peak, refused = done["stdout"].split()
    assert refused == "True", done  # the kernel refused a fork: the bound was reached
    assert int(peak) < BOUND  # bubblewrap's own processes outside the namespace count too
    assert (after["status"], after["stdout"]) == ("completed", "ok\n")
    found = UidRange.find(root)
    assert found is not None
    assert _leftovers(found) == []


@pytest.mark.parametrize("sandbox", ["required", "auto"])
def test_an_os_fork_loop_under_a_small_bound(root: Path, sandbox: str) -> None:
    settings = ShellSettings(approval="never", sandbox=sandbox, max_processes=BOUND)  # type: ignore[arg-type]
    [done] = run(shell(root, settings=settings), ("exec", {"command": FORKS, **WAIT}))
    assert 1 <= int(done["stdout"]) < BOUND


def test_two_sessions_commands_do_not_share_a_count(root: Path) -> None:
    # One command holds every process its bound allows; another command, started while it
    # does, still forks as many as it asks for: each running command counts under its own uid.
    holder = FORKS.replace("range(40)", "range(100)").replace("print(n)", "print(n, flush=True)")
    tools = shell(root, settings=_settings(max_processes=BOUND))
    catalog = Catalog(tools)
    ten = FORKS.replace("range(40)", "range(10)")

    async def main() -> tuple[str, dict[str, Any]]:
        started = await catalog.call(
            "exec", {"command": holder + "; sleep 300", "background": True}
        )
        sid = started["sessionId"]
        polled = await catalog.call("process", {"action": "poll", "sessionId": sid})
        while not polled["aggregated"].strip():
            polled = await catalog.call("process", {"action": "poll", "sessionId": sid})
        other = await catalog.call("exec", {"command": ten, **WAIT})
        await catalog.call("process", {"action": "kill", "sessionId": sid})
        return polled["aggregated"], other

    try:
        held, other = asyncio.run(main())
    finally:
        for tool in tools:
            if tool.on_close is not None:
                tool.on_close()
    assert 1 <= int(held) < BOUND  # the first one is at its bound
    assert other["stdout"] == "10\n"  # and the second is not starved by it


def test_the_workspace_stays_writable_and_roots_on_disk(root: Path) -> None:
    (root / "existing.txt").write_text("before\n")
    command = "echo after >> existing.txt && mkdir made && echo new > made/new.txt && id -u"
    [done] = run(shell(root, settings=_settings()), ("exec", {"command": command, **WAIT}))
    assert (done["status"], done["stdout"]) == ("completed", "1000\n"), done
    assert (root / "existing.txt").read_text() == "before\nafter\n"
    for path in (root / "existing.txt", root / "made", root / "made" / "new.txt"):
        assert (path.stat().st_uid, path.stat().st_gid) == (0, 0)


DEAD_HOLDER = """
import os, subprocess, sys
from pathlib import Path
from clawcell.tools._shell._uid_leases import UidRange
uids = UidRange(first=int(sys.argv[1]), count=1, state=Path(sys.argv[2]))
lease = uids.lease(Path(sys.argv[3]))
left = subprocess.Popen(["sleep", "300"], user=lease.uid, group=lease.uid, cwd="/",
                        start_new_session=True, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
print(left.pid, flush=True)
os.kill(os.getpid(), 9)
"""


def test_a_lease_left_by_a_dead_holder_kills_what_still_runs_as_its_uid(
    root: Path, tmp_path: Path
) -> None:
    # A holder killed mid-command: its lock goes with it, its mount and a process of its uid
    # stay behind. The next lease of that uid ends the process and replaces the mount.
    state, first = tmp_path / "state", 0x7000_F000
    holder = subprocess.run(
        [sys.executable, "-c", DEAD_HOLDER, str(first), str(state), str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert holder.returncode == -9, holder.stderr
    leftover = int(holder.stdout)
    assert not gone(leftover) and len(_leased_mounts(state)) == 1
    try:
        again = UidRange(first=first, count=1, state=state).lease(root)
        assert again.uid == first
        assert gone(leftover)
        again.release()
        assert _leased_mounts(state) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(leftover, 9)


def test_a_release_while_the_uid_still_runs_leaves_it_for_the_next_holder_to_sweep(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing of a sandboxed command outlives its PID namespace, but if a process of the uid
    # still ran, the uid must not be handed on as clean.
    monkeypatch.setattr(_uid_leases, "_END_SECONDS", 0.0)
    state, first = tmp_path / "state", 0x7000_F002
    uids = UidRange(first=first, count=1, state=state)
    lease = uids.lease(root)
    left = subprocess.Popen(
        ["sleep", "300"], user=first, group=first, cwd="/", stdout=subprocess.DEVNULL
    )
    try:
        lease.release()
        assert (state / "uids" / str(first)).read_bytes() == b"busy"
        assert not gone(left.pid)
        uids.lease(root).release()  # the next holder kills it first, then frees the uid
        assert left.wait(timeout=60) == -9
        assert (state / "uids" / str(first)).read_bytes() == b"clean"
    finally:
        left.kill()
        left.wait()


def test_every_uid_leased_is_a_spawn_failure_not_an_unbounded_command(
    root: Path, tmp_path: Path
) -> None:
    uids = UidRange(first=0x7000_F001, count=1, state=tmp_path / "state")
    held = uids.lease(root)
    try:
        with pytest.raises(OSError, match="all 1 uids from"):
            uids.lease(root)
    finally:
        held.release()
    uids.lease(root).release()  # free again


def test_an_explicit_bound_nothing_can_enforce_is_refused(root: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"`max_processes` = 64 cannot be enforced"):
        shell(root, settings=ShellSettings(approval="never", sandbox="off", max_processes=64))


def test_an_unset_bound_nothing_can_enforce_is_logged_once(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _process_bound.warn_unbounded.cache_clear()  # once per process: forget earlier tests'
    settings = ShellSettings(approval="never", sandbox="off")
    with caplog.at_level(logging.WARNING, logger="clawcell.tools"):
        tools = shell(root, settings=settings)
        shell(root, settings=settings)
    warned = [r for r in caplog.records if "no process bound" in r.getMessage()]
    assert len(warned) == 1
    assert "commands run without bubblewrap" in warned[0].getMessage()
    [done] = run(tools, ("exec", {"command": "echo still runs", **WAIT}))
    assert done["stdout"] == "still runs\n"


def test_leases_fail_closed_when_the_mount_cannot_be_made(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(UidRange, "find", _never)
    with pytest.raises(ConfigurationError, match="idmapped mounts of the workspace"):
        shell(root, settings=_settings(max_processes=64))


def test_settings_check_max_processes() -> None:
    assert ShellSettings().processes == 4096
    assert ShellSettings(max_processes=7).processes == 7
    for bad in (0, -1, True, 1.5, "8"):
        with pytest.raises(ConfigurationError, match="`max_processes` must be a positive"):
            ShellSettings(max_processes=bad)  # type: ignore[arg-type]
    assert json.dumps(ShellSettings().max_processes) == "null"
