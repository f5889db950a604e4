"""The reaper that an unsandboxed command runs under: nothing it starts outlives it.

Run as `python -I -S _reaper.py COMMAND...` (standard library only). It makes itself a child
subreaper (`PR_SET_CHILD_SUBREAPER`), so every process the command starts — a `setsid`
daemon, a double fork — is re-parented to it, not to the host's init, when its own parent
dies. When the command ends, or the reaper receives `SIGTERM` (`process kill`, a timeout,
the closing host, or its parent's death through `PR_SET_PDEATHSIG`), it kills its children
with `SIGKILL` and reaps them, round after round, until it has none: orphans arrive as its
children, so the whole tree goes. Then it ends as the command did (the same exit status, or
the same signal).

Inside bubblewrap this is not needed: the PID namespace ends with its first process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import Final

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_CHILD_SUBREAPER: Final = 36


class _Stop(Exception):
    """`SIGTERM` arrived: stop the tree now."""


def _stop(_signum: int, _frame: object) -> None:
    raise _Stop


def _kill_children() -> None:
    """SIGKILL every child until none is left (orphans of killed ones become children)."""
    while True:
        try:
            for name in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{name}/children") as handle:
                    for pid in handle.read().split():
                        _signal(int(pid))
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except _Stop:
            continue


def _signal(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Run `argv` under the reaper; its wait status."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    signal.signal(signal.SIGTERM, _stop)
    status = 0
    try:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                os.execvp(argv[0], argv)
            finally:
                os._exit(127)
        status = os.waitpid(pid, 0)[1]
    except _Stop:
        status = signal.SIGKILL  # as if killed, which the host asked for
    _kill_children()
    return status


if __name__ == "__main__":
    ended = main(sys.argv[1:])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if os.WIFSIGNALED(ended):
        number = os.WTERMSIG(ended)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    sys.exit(os.waitstatus_to_exitcode(ended) if os.WIFEXITED(ended) else 1)
