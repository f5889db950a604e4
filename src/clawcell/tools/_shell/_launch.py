"""What a shell command is started with: the `Launch` a session and its exit message read."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from ..._lazy import value_class
from ._rlimits import Rlimits
from ._uid_leases import UidLease

__all__ = ["Launch"]


@value_class
class Launch:
    """What to start.

    Attributes:
        command: The command text as the model wrote it.
        argv: The full argument vector (shell and sandbox included).
        cwd: The working directory the host process starts in.
        shown_cwd: The working directory as results show it (workspace-relative).
        env: The complete environment.
        timeout_seconds: Lifetime before the group is killed.
        limits: Resource limits.
        fds: Descriptors the sandbox reads at start (passed to the child, then closed).
        reaped: Whether `argv` runs under `_reaper`, which `SIGTERM` makes kill its tree.
        lease: The host uid the command runs as (root hosts without a pids cgroup), which
            the session releases when the command ended.
    """

    command: str
    argv: list[str]
    cwd: Path
    shown_cwd: str
    env: Mapping[str, str]
    timeout_seconds: float
    limits: Rlimits
    fds: tuple[int, ...] = ()
    reaped: bool = False
    lease: UidLease | None = None

    def close_fds(self) -> None:
        """Close `fds` in this process (once the child holds them, or when it never starts)."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def abandon(self) -> None:
        """Give back what was taken for a command that never started."""
        self.close_fds()
        if self.lease is not None:
            self.lease.release()
