"""Leased host uids: the process bound of a root host that cannot make a pids cgroup.

Why: `RLIMIT_NPROC` never binds a process whose real uid is host root, and bubblewrap maps the
sandbox uid onto the uid that starts it. So on a root host each sandboxed command starts
bubblewrap as a uid of its own instead: a uid leased for the command's lifetime from a range
that no account uses. Linux counts `RLIMIT_NPROC` per real uid, so the count is this command's
processes and nobody else's: a fork bomb in one command cannot starve another (each running
command holds a different uid, across every clawcell process of the host), and killing every
process of that uid (`kill(-1)` sent as that uid) is exact, however they detached.

The workspace stays writable through an idmapped bind mount (`_idmap`): the command sees the
files root owns as its own, and what it writes is root's on disk, as without a lease.

Leases are host state, shared by every clawcell process of the machine: a lease is an
exclusive `flock` on `/run/clawcell/uids/<uid>`, released by the kernel when its holder dies.
A lease file that still says `busy` was left by a holder that died mid-command: the next
holder kills whatever still runs as that uid before it starts anything.

The range: the `clawcell` entry of `/etc/subuid` (`clawcell:FIRST:COUNT`) when there is one,
else `DEFAULT_FIRST` .. `DEFAULT_FIRST + DEFAULT_COUNT - 1` (0x70000000 onward, above
systemd's container range and below its foreign range; no Debian tool allocates there).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import random
import subprocess
import threading
import time
from dataclasses import field
from pathlib import Path
from typing import Final

from ..._lazy import value_class
from ._idmap import mount_idmapped, unmount

__all__ = ["DEFAULT_COUNT", "DEFAULT_FIRST", "UidLease", "UidRange", "kill_uid", "uid_processes"]

DEFAULT_FIRST: Final = 0x7000_0000
DEFAULT_COUNT: Final = 4096
_STATE: Final = Path("/run/clawcell")
_CLEAN: Final = b"clean"
_BUSY: Final = b"busy"
_END_SECONDS: Final = 5.0
_NEXT: Final = itertools.count(random.randrange(1 << 30))
_log = logging.getLogger("clawcell.tools")


class UidLease:
    """One command's uid and the workspace mount it sees (release it once the command ended)."""

    def __init__(self, *, uid: int, source: Path, lock: int) -> None:
        self.uid = uid
        self.source = source
        """The idmapped mount of the workspace that bubblewrap binds in its place."""
        self._lock = lock
        self._released = threading.Lock()
        self._open = True

    def release(self) -> None:
        """Once the command's processes ended, remove the mount and free the uid (idempotent).

        Call it after the command's leader ended. Nothing is killed here: every process of the
        command lives in its sandbox's PID namespace, which the kernel empties when the
        sandbox's PID 1 ends (bubblewrap's `--die-with-parent` ends it with the leader); this
        waits for that. A holder that died before releasing leaves its lease `busy`, and
        the next holder of the uid kills every process of it (`kill_uid`) first."""
        with self._released:
            if not self._open:
                return
            self._open = False
        try:
            ended = _wait_ended(self.uid)
            unmount(self.source)
            if ended:  # else it stays `busy`: the next holder kills what is left first
                os.ftruncate(self._lock, 0)
                os.pwrite(self._lock, _CLEAN, 0)
        finally:
            os.close(self._lock)  # the kernel drops the flock with the last descriptor


def kill_uid(uid: int) -> None:
    """SIGKILL every process whose uid is `uid`: `kill(-1)` sent by a shell running as it
    (the kernel signals them all in one pass, so a fork racing it does not escape)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["/bin/sh", "-c", "kill -s KILL -- -1"],
            user=uid,
            group=uid,
            extra_groups=[],
            cwd="/",
            env={},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            check=False,
            timeout=30,
        )


def uid_processes(uid: int) -> list[int]:
    """The pids of live processes whose `/proc` entry `uid` owns (zombies are left out: they
    have ended, and whoever adopted them reaps them)."""
    out: list[int] = []
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            with contextlib.suppress(OSError, ValueError):
                if entry.name.isdigit() and entry.stat().st_uid == uid and _live(entry.name):
                    out.append(int(entry.name))
    return out


def _live(pid: str) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        state = handle.read().rsplit(b")", 1)[1].split()[0]
    return state not in (b"Z", b"X")


def _wait_ended(uid: int) -> bool:
    """Wait (up to `_END_SECONDS`) until no process of `uid` runs; whether none does.

    The processes of a sandbox's PID namespace end a moment after its PID 1. (Their zombies may
    outlive this: bubblewrap's outer process exits as soon as its command did, so the
    sandbox's PID 1 ends as an orphan that the host's init reaps. Until then it counts against
    the uid's `RLIMIT_NPROC`, one reason leases rotate through the range rather than reuse the
    lowest free uid.)"""
    deadline = time.monotonic() + _END_SECONDS
    while uid_processes(uid):
        if time.monotonic() >= deadline:
            _log.warning(
                "Processes of leased uid %d still run %g s after its command ended; the next "
                "holder of the uid kills them.",
                uid,
                _END_SECONDS,
            )
            return False
        time.sleep(0.002)
    return True


@value_class
class UidRange:
    """The uids commands may lease, and where leases are kept."""

    first: int = DEFAULT_FIRST
    count: int = DEFAULT_COUNT
    state: Path = field(default=_STATE)

    @classmethod
    def find(cls, workspace: Path) -> UidRange | None:
        """The host's range when leasing works here for `workspace` (root, a writable `/run`,
        idmapped mounts on the workspace's file system), else `None`."""
        if os.geteuid() != 0:
            return None
        first, count = _subuid_range()
        found = cls(first=first, count=count)
        try:
            found.lease(workspace).release()
        except OSError as exc:
            _log.debug("leased uids do not work here: %s", exc)
            return None
        return found

    def lease(self, workspace: Path) -> UidLease:
        """A free uid of the range, with `workspace` mounted for it.

        Raises:
            OSError: every uid of the range is leased, or the mount failed.
        """
        uids = self.state / "uids"
        mounts = self.state / "mounts"
        for path, mode in ((self.state, 0o711), (uids, 0o700), (mounts, 0o711)):
            path.mkdir(mode=mode, exist_ok=True)
        start = next(_NEXT)  # rotate: a uid is reused only after the rest of the range
        for index in range(self.count):
            uid = self.first + (start + index) % self.count
            lock = os.open(uids / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(lock)
                continue
            try:
                return self._take(uid, lock, workspace, mounts / str(uid))
            except BaseException:
                os.close(lock)
                raise
        raise OSError(
            f"all {self.count} uids from {self.first} are leased to running commands; "
            "widen the `clawcell` range in /etc/subuid or run fewer commands at once"
        )

    def _take(self, uid: int, lock: int, workspace: Path, target: Path) -> UidLease:
        if os.pread(lock, len(_BUSY), 0) == _BUSY:
            kill_uid(uid)  # a holder died mid-command: nothing of its command may remain
            _wait_ended(uid)
        os.ftruncate(lock, 0)
        os.pwrite(lock, _BUSY, 0)
        target.mkdir(mode=0o700, exist_ok=True)
        unmount(target)
        mount_idmapped(workspace, target, uid)
        return UidLease(uid=uid, source=target, lock=lock)


def _subuid_range(path: Path = Path("/etc/subuid")) -> tuple[int, int]:
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            name, _, rest = line.partition(":")
            first, _, count = rest.partition(":")
            if name == "clawcell" and first.isdigit() and count.isdigit() and int(count) > 0:
                return int(first), int(count)
    return DEFAULT_FIRST, DEFAULT_COUNT
