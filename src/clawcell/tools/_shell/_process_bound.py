"""What bounds a command's processes on this host, and what happens where nothing can.

In order: a pids cgroup per command (`_cgroup`, any user); on a non-root host, `RLIMIT_NPROC`
(set by `Rlimits`); on a root host without a pids cgroup, `RLIMIT_NPROC` under a host uid
leased to each sandboxed command (`_uid_leases`). Where none of them works (a root host with a
read-only `/sys/fs/cgroup` whose commands run unsandboxed, or whose file system cannot be
idmapped), an explicit `max_processes` is refused with `ConfigurationError`, and an unset one
is logged once: a setting the host cannot enforce is an error, a default is a best effort.
"""

from __future__ import annotations

import functools
import logging
import os

from ...errors import ConfigurationError
from ._cgroup import Cgroups
from ._sandbox import Sandbox
from ._shell_settings import ShellSettings
from ._uid_leases import UidRange

__all__ = ["leased_uids", "warn_unbounded"]

_log = logging.getLogger("clawcell.tools")
_SET_UP = (
    "make one of these work: a writable pids cgroup (cgroup v1's pids hierarchy, or a "
    "delegated cgroup v2 subtree with `pids` in its `cgroup.subtree_control`); or bubblewrap "
    'with user namespaces (`sandbox` not "off"), a writable /run and a workspace on a file '
    "system with idmapped mounts (ext4, xfs, btrfs; Linux 5.12+), so each command runs as a "
    "leased uid; or run clawcell as a non-root user"
)


def leased_uids(
    settings: ShellSettings, sandbox: Sandbox, cgroups: Cgroups | None
) -> UidRange | None:
    """The uid range commands lease, when that is this host's process bound, else `None`.

    Raises:
        ConfigurationError: `max_processes` is set and nothing here can enforce it.
    """
    if cgroups is not None or os.geteuid() != 0:
        return None  # the cgroup binds, or `RLIMIT_NPROC` binds a non-root host user
    if sandbox.bwrap is not None:
        found = UidRange.find(sandbox.root)
        if found is not None:
            return found
        why = "idmapped mounts of the workspace or leased uids do not work here"
    else:
        why = "commands run without bubblewrap"
    if settings.max_processes is not None:
        raise ConfigurationError(
            f"Shell setting `max_processes` = {settings.max_processes!r} cannot be enforced "
            f"here: clawcell runs as root, which `RLIMIT_NPROC` does not bind, no pids cgroup "
            f"can be made, and {why}. To bound processes, {_SET_UP}. Or leave `max_processes` "
            "unset to run commands without a process bound (logged once)."
        )
    warn_unbounded(why)
    return None


@functools.cache
def warn_unbounded(why: str) -> None:
    """Log, once per process and reason, that commands run without a process bound."""
    _log.warning(
        "Shell commands have no process bound on this host: clawcell runs as root, which "
        "`RLIMIT_NPROC` does not bind, no pids cgroup can be made, and %s, so a fork bomb in "
        "a command is stopped only by its timeout and the kernel's limits. To bound them, %s.",
        why,
        _SET_UP,
    )
