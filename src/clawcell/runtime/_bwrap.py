"""The bubblewrap probe: is `bwrap` installed, and can it create its namespaces here?

Both OS sandboxes use it: the V8 executor's workers (`_v8/_process`) and the shell tool's
commands (`clawcell.tools`, which sits above the runtime and imports it from here). Each
builds its own argument list; only the question "does bubblewrap work on this machine" is
shared, answered once per process.
"""

from __future__ import annotations

import functools
import subprocess

__all__ = ["bwrap_binary"]


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
