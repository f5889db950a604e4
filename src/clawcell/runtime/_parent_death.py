"""A child process's parent-death signal, set between fork and exec, with no window.

Every process clawcell starts for a host (a V8 worker here, a shell command or its reaper in
`clawcell.tools`) calls `die_with_parent(host)` in the child before it execs (`preexec_fn`):
the kernel then sends `SIGKILL` when the host's forking thread ends. `PR_SET_PDEATHSIG` alone
leaves a window: a host killed after the fork but before the `prctl` never signals the child,
which would run on, re-parented to init. So the child also checks its parent afterwards and
exits at once when it is no longer the host (the check comes after the `prctl`, so no death
can fall between the two).

Only `prctl` (through a library loaded at import), `getppid` and `_exit` run in the child:
no import, lock or allocation of Python's that another thread could hold at the fork.
The signal survives `exec` (not of a setuid or file-capability binary); it follows the
*thread* that forked the child, so a caller must fork from a thread that lives as long as
the host (see `runtime/_v8/_process.py`'s spawner).
"""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Any, Final

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG: Final = 1
_PRCTL: Final[Any] = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)  # Linux only


def die_with_parent(host: int) -> None:
    """In the child, before exec: be killed when the host `host` ends; exit now if it has."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != host:  # the host died before the signal was set
        os._exit(1)
