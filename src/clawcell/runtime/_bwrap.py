"""The bubblewrap probe: is `bwrap` installed, and can it create its namespaces here?

Both OS sandboxes use it: the V8 executor's workers (`_v8/_process`) and the shell tool's
commands (`clawcell.tools`, which sits above the runtime and imports it from here). Each
builds its own argument list; only the question "does bubblewrap work on this machine" is
shared, answered once per process.

Bubblewrap leaves a window in which its sandbox outlives a killed parent
(containers/bubblewrap#633, open): after `clone()` the sandbox's first process waits on an
eventfd until the outer bubblewrap has written its uid maps, and it sets its own parent-death
signal (`--die-with-parent`) only later. An outer bubblewrap killed in between (its host died,
so our parent-death signal reached it) leaves that process waiting forever, PID 1 of its
namespace, re-parented to the machine's init. `pid_guard` closes the window: the outer
bubblewrap runs as PID 1 of a PID namespace of its own (util-linux `unshare --user
--map-current-user --pid --fork --kill-child`), so when it dies, for whatever reason, the
kernel kills every process of that namespace, the sandbox's included.
"""

from __future__ import annotations

import functools
import subprocess
from typing import Final

__all__ = ["bwrap_binary", "pid_guard"]

_GUARD_FLAGS: Final = ("--user", "--map-current-user", "--pid", "--fork", "--kill-child")


@functools.cache
def bwrap_binary() -> str | None:
    """The `bwrap` binary when it is installed and can create its namespaces here, else
    `None` (not installed, or unprivileged user namespaces are off, as in some containers).

    The answer is probed once (a `bwrap --unshare-all … /bin/true` run) and cached.
    """
    import shutil  # here: a first cell never probes bubblewrap (shutil loads bz2, lzma)

    found = shutil.which("bwrap")
    if found is None:
        return None
    probe = [found, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if done.returncode == 0 else None


@functools.cache
def pid_guard(bwrap: str) -> tuple[str, ...]:
    """The command prefix that runs `bwrap` as PID 1 of a PID namespace of its own, whose death
    ends the whole sandbox (the module docstring says why), or `()` when this machine has no
    `unshare` that can (util-linux before 2.38 lacks `--map-current-user`). Probed once per
    `bwrap` (`unshare … bwrap --unshare-all … /bin/true`) and cached.

    `unshare`'s own child sets its parent-death signal just after its `fork()`; an `unshare`
    killed in that instant leaves its child running bubblewrap without one, but with a live
    parent-death chain below it, and the worker it starts reads the end of its stdin at once
    and exits.
    """
    import shutil  # as in `bwrap_binary`

    found = shutil.which("unshare")
    if found is None:
        return ()
    guard = (found, *_GUARD_FLAGS)
    probe = [*guard, bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return guard if done.returncode == 0 else ()
