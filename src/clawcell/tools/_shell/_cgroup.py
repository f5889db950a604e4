"""A pids cgroup per command, where this host lets clawcell make one.

Why: `RLIMIT_NPROC` does not bind a process whose real uid is root, and a sandboxed command
started by root is root's on the host (bubblewrap maps the sandbox uid onto the caller's).
A cgroup's `pids.max` binds every user, and its member list names every process the command
started, however it detached (`setsid`, double forks), so killing them all is exact.

Where: the pids controller of cgroup v1 (`…/pids/<own cgroup>/`), or a cgroup v2 directory
whose `cgroup.subtree_control` already enables `pids` (a delegated subtree). Each command gets
a directory `clawcell-<table>-<n>` beside the host's own cgroup; the child joins it between
fork and exec. Where neither can be written (an unprivileged user without delegation, a
read-only `/sys/fs/cgroup`), `Cgroups.find()` is `None` and `RLIMIT_NPROC` is the bound.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from ..._lazy import value_class

__all__ = ["Cgroups", "CommandCgroup"]

_PREFIX: Final = "clawcell-"
_STALE_SECONDS: Final = 60.0


@value_class
class CommandCgroup:
    """The cgroup of one command."""

    path: Path

    def joiner(self) -> Callable[[], None]:
        """What the child runs between fork and exec to join (its own pid: `0`)."""
        procs = str(self.path / "cgroup.procs")

        def join() -> None:
            with open(procs, "w") as handle:
                handle.write("0")

        return join

    def pids(self) -> list[int]:
        """The processes in it now."""
        try:
            return [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill(self, *, wait: float = 0.0) -> None:
        """SIGKILL every member (`cgroup.kill` where the kernel has it, else each pid, round
        after round, through pidfds so a recycled pid is never hit). With `wait`, block up to
        that many seconds until every member has ended, then remove the directory (otherwise
        the next `Cgroups.make` or `sweep` does)."""
        with contextlib.suppress(OSError):
            (self.path / "cgroup.kill").write_text("1")
        deadline = time.monotonic() + wait
        for _ in range(64):  # a member that forked meanwhile shows up in the next round
            pidfds = _pidfds(self.pids())
            try:
                for fd in pidfds:
                    with contextlib.suppress(OSError):
                        signal.pidfd_send_signal(fd, signal.SIGKILL)
                ended = all(_ended(fd, deadline) for fd in pidfds)
            finally:
                for fd in pidfds:
                    os.close(fd)
            if not pidfds or not ended or time.monotonic() >= deadline:
                break
        with contextlib.suppress(OSError):
            self.path.rmdir()


def _pidfds(pids: list[int]) -> list[int]:
    out: list[int] = []
    for pid in pids:
        with contextlib.suppress(OSError):
            out.append(os.pidfd_open(pid))
    return out


def _ended(pidfd: int, deadline: float) -> bool:
    """Wait until the process ends (its pidfd turns readable) or the deadline passes."""
    readable, _, _ = select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))
    return bool(readable)


@value_class
class Cgroups:
    """Where command cgroups are made: the directory holding the host's own cgroup."""

    parent: Path

    @classmethod
    def find(cls) -> Cgroups | None:
        """A writable pids hierarchy for command cgroups, or `None`."""
        return _find()

    def make(self, table: str, number: int, max_pids: int) -> CommandCgroup | None:
        """Command `number` of `table`'s cgroup, bounded to `max_pids` processes, or `None`
        if it cannot be made."""
        self.sweep(table)
        path = self.parent / f"{_PREFIX}{table}-{number}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(max_pids))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return CommandCgroup(path=path)

    def sweep(self, table: str) -> None:
        """Remove empty command cgroups: `table`'s own, and any other table's (or process's)
        older than a minute. A younger one of another table may be empty only for the moment
        between its `make` and its child joining it."""
        prefix = f"{_PREFIX}{table}-"
        stale = time.time() - _STALE_SECONDS
        with contextlib.suppress(OSError):
            for entry in self.parent.iterdir():
                if not entry.name.startswith(_PREFIX) or CommandCgroup(path=entry).pids():
                    continue
                with contextlib.suppress(OSError):
                    if entry.name.startswith(prefix) or entry.stat().st_mtime < stale:
                        entry.rmdir()


@functools.cache
def _find() -> Cgroups | None:
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in own:
        number, controllers, path = line.split(":", 2)
        mount = _mount_point(mounts, v2=number == "0")
        if mount is None or (number != "0" and "pids" not in controllers.split(",")):
            continue
        parent = mount / path.lstrip("/")
        if number == "0" and "pids" not in _read(parent / "cgroup.subtree_control").split():
            continue
        if _writable(parent):
            return Cgroups(parent=parent)
    return None


def _mount_point(mounts: list[str], *, v2: bool) -> Path | None:
    for line in mounts:
        fields = line.split()
        kind = fields[fields.index("-") + 1]
        if v2 and kind == "cgroup2":
            return Path(fields[4])
        if not v2 and kind == "cgroup" and "pids" in fields[-1].split(","):
            return Path(fields[4])
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _writable(parent: Path) -> bool:
    probe = parent / f"{_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.rmdir()
    return True
