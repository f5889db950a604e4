"""`WriteBudget`: how much a command may grow the workspace, checked while it runs.

Why a check and not a wall: `RLIMIT_FSIZE` bounds one file, not many, and a size-capped
filesystem for the workspace needs privileges clawcell does not assume. So the watcher of
each command measures the space the workspace takes (every file's allocated blocks, symbolic
links not followed) when the command starts and again every `interval` seconds, and kills
the command when the growth passes the budget. Honestly: the bound is checked, not enforced
by the kernel, so a command can pass it by what it writes between two checks (the interval
grows with the time one measurement takes, to stay a small share of a core on a large
workspace); and the growth of the workspace is counted, whoever caused it, so commands
running side by side in one workspace share their budgets.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = ["WriteBudget", "usage"]

MIN_INTERVAL: Final = 0.25
_SHARE: Final = 10  # wait ten times as long as a measurement took


def usage(root: Path) -> int:
    """Bytes allocated to everything under `root` (not following symbolic links)."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                total += entry.stat(follow_symlinks=False).st_blocks * 512
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
            except OSError:
                continue
    return total


@dataclass(kw_only=True)
class WriteBudget:
    """The growth of `root` a command may cause, and when to look next."""

    root: Path
    limit: int
    baseline: int = field(init=False, default=0)
    interval: float = field(init=False, default=MIN_INTERVAL)

    def start(self) -> None:
        """Measure the workspace before the command writes (much)."""
        self.baseline = self._measure()

    def exceeded(self) -> bool:
        """Whether the workspace grew past `limit` since `start`."""
        return self._measure() - self.baseline > self.limit

    def _measure(self) -> int:
        began = time.monotonic()
        used = usage(self.root)
        self.interval = max(MIN_INTERVAL, (time.monotonic() - began) * _SHARE)
        return used
